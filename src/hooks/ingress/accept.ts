import { randomUUID } from "node:crypto";
import type { JobInsert } from "pg-boss";
import {
  settleAll,
  withPipelinedTransaction,
  type Pool,
  type PoolClient,
  type Queryable,
} from "../../db/index.ts";
import type { Jobs } from "../../jobs/index.ts";
import type { EventStore, NewEvent } from "../../store/index.ts";
import { changeEventKey, sourceStream } from "./envelope.ts";
import { ChangeEventConflictError, WebhookRefusal } from "../errors.ts";
import { CHANGE_EVENT, type ChangeEventReceived } from "../../events/index.ts";
import { GroupCommit } from "./group-commit.ts";
import { CHANGE_EVENTS_QUEUE, jobOptions, type ChangeEventJob } from "../processing/queue.ts";
import type { ResolvedProvider } from "../definition/registry.ts";
import type { ChangeEventEnvelope } from "../definition/types.ts";

export interface AcceptDependencies {
  readonly store: EventStore;
  readonly jobs: Jobs;
  /** Where the transactions run: a pipelined pool (`pipelinedPool`) of the store's database. */
  readonly pool: Pool;
}

/** Where a delivery came from. */
export interface DeliverySource {
  readonly hook: string;
  readonly webhook: string;
  readonly deliveryId: string;
  readonly provider: ResolvedProvider;
}

export interface AcceptedChangeEvent {
  readonly source: string;
  readonly eventId: string;
  /** False when the same change event had been accepted before (nothing was stored). */
  readonly stored: boolean;
}

interface Pending {
  readonly id: string;
  readonly key: string;
  readonly stream: string;
  readonly envelope: ChangeEventEnvelope;
  readonly contentHash: string;
}

/** The change events of one delivery, to be committed together or not at all. */
interface Delivery {
  readonly from: DeliverySource;
  readonly pending: readonly Pending[];
}

/** Most change events one transaction appends; a longer queue waits for the next one. */
const MAX_BATCH_EVENTS = 500;

/**
 * Takes the change events of deliveries into the event log and queues their processing.
 *
 * Each event goes to its source's stream with the idempotency key `change-event:<source>:
 * <eventId>` and its content hash. A key already stored is a success that stores nothing with
 * the same hash, and 409 with another.
 *
 * New events are appended together with their pg-boss jobs in one transaction, so a delivery
 * is answered with success only once both are committed, and there is never a job without its
 * event nor an event without its job. The transaction first takes an advisory lock per stream,
 * then looks the keys up: every ingress writer of the stream, in any process, holds that lock
 * from its look-up to its commit, so what the look-up finds is final and concurrent deliveries
 * of one event store it once (same content: the others succeed storing nothing; other
 * content: 409). An advisory lock assigns no transaction id, so waiting for it does not hold
 * back the log's safe bound. A repeated delivery is decided by that same look-up, in the
 * next group's transaction: a look-up of its own before it, on another connection, cost a
 * round trip per delivery and saved none (the group's transaction runs anyway).
 *
 * The transaction pipelines its statements (`withPipelinedTransaction`, on connections of the
 * webhook's own): BEGIN, the locks and the look-up go out together, then the events and the
 * jobs, then COMMIT once both have succeeded. Three round trips instead of six: on a busy
 * machine each one waits for PostgreSQL and then for this event loop to be scheduled.
 *
 * Why a group commit: a durable commit waits for the disk, and with a stream per source and
 * that lock, one transaction per delivery would let a source's deliveries through one disk
 * flush at a time (about a hundred a second here). So deliveries to one stream that arrive
 * while its transaction runs wait and go together in the next one; each is still committed
 * before it is answered, and a delivery that conflicts is refused alone.
 */
export class ChangeEventAcceptor {
  private readonly deps: AcceptDependencies;
  /** Per stream: the deliveries waiting for its next transaction. */
  private readonly streams: GroupCommit<Delivery, ReadonlySet<string>>;

  constructor(deps: AcceptDependencies) {
    this.deps = deps;
    this.streams = new GroupCommit(
      (stream, batch) => this.commit([stream], batch),
      (delivery) => delivery.pending.length,
      MAX_BATCH_EVENTS,
    );
  }

  /**
   * @throws ChangeEventConflictError 409; WebhookRefusal 503 `change_ingress_unavailable` when
   *   the store fails (nothing of the delivery is stored; the sender resends).
   */
  async accept(
    from: DeliverySource,
    admitted: readonly { envelope: ChangeEventEnvelope; contentHash: string }[],
  ): Promise<AcceptedChangeEvent[]> {
    // One delivery may carry the same event twice: once is enough, twice differently is a conflict.
    const byKey = new Map<string, Pending>();
    for (const { envelope, contentHash } of admitted) {
      const key = changeEventKey(envelope.source, envelope.eventId);
      const earlier = byKey.get(key);
      if (earlier && earlier.contentHash !== contentHash) {
        throw new ChangeEventConflictError(envelope.source, envelope.eventId);
      }
      if (!earlier) {
        const stream = sourceStream(envelope.source);
        byKey.set(key, { id: randomUUID(), key, stream, envelope, contentHash });
      }
    }
    const all = [...byKey.values()];
    try {
      const stored = await this.store({ from, pending: all });
      return all.map((p) => ({
        source: p.envelope.source,
        eventId: p.envelope.eventId,
        stored: stored.has(p.key),
      }));
    } catch (error) {
      if (error instanceof WebhookRefusal) throw error;
      throw new WebhookRefusal("change_ingress_unavailable", "the event store is unavailable", {
        retryAfter: 5,
        cause: error,
      });
    }
  }

  /** The keys of `delivery` that this delivery stored. */
  private store(delivery: Delivery): Promise<ReadonlySet<string>> {
    const streams = [...new Set(delivery.pending.map((p) => p.stream))].sort();
    if (streams.length === 1) return this.streams.submit(streams[0]!, delivery);
    // Rare: one delivery for several sources. Its own transaction, every stream at once.
    return this.commit(streams, [delivery]).then(([result]) => {
      if (result instanceof Error) throw result;
      return result!;
    });
  }

  /**
   * One transaction for `deliveries`, locking and appending to `streams` in name order (so
   * that two transactions spanning the same streams cannot deadlock). Resolves to one result
   * per delivery: the keys it stored, or the error that refuses it alone.
   */
  private async commit(
    streams: readonly string[],
    deliveries: readonly Delivery[],
  ): Promise<(ReadonlySet<string> | Error)[]> {
    // Three round trips: BEGIN, the locks and the look-up; the append and the jobs; COMMIT.
    return withPipelinedTransaction(this.deps.pool, async (tx) => {
      // Sent together, run in order: the look-up is a statement of its own after the locks,
      // so its snapshot, taken when it starts, sees every commit of the locks' last holder.
      const locks = streams.map((stream) =>
        tx.query({ name: LOCK_STATEMENT, text: LOCK, values: [`annal:ingress:${stream}`] }),
      );
      const lookup = storedHashes(
        tx,
        deliveries.flatMap((d) => d.pending.map((p) => p.key)),
      );
      const [known] = await settleAll([lookup, ...locks]);
      // In order: a key stored before, or by an earlier delivery of the batch, is repeated
      // with the same content and refuses the delivery with other content; the first
      // delivery of a new key stores it.
      const hashes = new Map(known);
      const owned = new Map<string, Pending>();
      const results = deliveries.map((delivery): ReadonlySet<string> | Error => {
        const clash = delivery.pending.find(
          (p) => hashes.has(p.key) && hashes.get(p.key) !== p.contentHash,
        );
        if (clash)
          return new ChangeEventConflictError(clash.envelope.source, clash.envelope.eventId);
        const mine = delivery.pending.filter((p) => !hashes.has(p.key));
        for (const p of mine) {
          hashes.set(p.key, p.contentHash);
          owned.set(p.key, p);
        }
        return new Set(mine.map((p) => p.key));
      });
      const from = new Map<string, DeliverySource>();
      deliveries.forEach((delivery, index) => {
        const result = results[index];
        if (result instanceof Error) return;
        for (const p of delivery.pending) if (result!.has(p.key)) from.set(p.key, delivery.from);
      });

      const writes: Promise<unknown>[] = [];
      const jobs: JobInsert[] = [];
      for (const stream of streams) {
        const events = [...owned.values()].filter((p) => p.stream === stream);
        if (events.length === 0) continue;
        writes.push(
          this.deps.store.appendToStream(
            stream,
            events.map((p) => toEvent(p, from.get(p.key)!)),
            // Under the stream's advisory lock, taken above: the keys are settled.
            { tx, keysSerialised: true },
          ),
        );
        for (const p of events) {
          const job: ChangeEventJob = { receivedEventId: p.id, priorAttempts: 0 };
          jobs.push({
            ...jobOptions(from.get(p.key)!.provider, p.envelope),
            id: p.id,
            data: job,
          });
        }
      }
      if (jobs.length > 0) writes.push(queueJobs(this.deps.jobs, tx, jobs));
      await settleAll(writes);
      return results;
    });
  }
}

const LOCK_STATEMENT = "annal-ingress-lock";
const LOCK = "SELECT pg_advisory_xact_lock(hashtext($1))";

function queueJobs(jobs: Jobs, tx: PoolClient, list: JobInsert[]) {
  // Prepared: the statement's text is the same for every group, and planning it anew each
  // time took half as long as running it.
  return jobs.boss.insert(CHANGE_EVENTS_QUEUE, list, {
    db: jobs.inTransaction(tx, { prepared: true }),
  });
}

/**
 * The content hashes of those keys that are stored (null for an event of another kind under
 * such a key). A stored event never changes, so what this finds is final.
 */
async function storedHashes(
  db: Queryable,
  keys: readonly string[],
): Promise<Map<string, string | null>> {
  const result = await db.query<{ key: string; hash: string | null }>({
    name: "annal-ingress-stored-hashes",
    text: `SELECT idempotency_key AS key,
            CASE WHEN type = $2 THEN data->>'contentHash' END AS hash
       FROM events WHERE idempotency_key = ANY($1::text[])`,
    values: [keys, CHANGE_EVENT.received],
  });
  return new Map(result.rows.map((row) => [row.key, row.hash]));
}

function toEvent(pending: Pending, from: DeliverySource): NewEvent<ChangeEventReceived> {
  const { envelope } = pending;
  return {
    id: pending.id,
    type: CHANGE_EVENT.received,
    data: {
      hook: from.hook,
      webhook: from.webhook,
      envelope,
      contentHash: pending.contentHash,
    },
    metadata: {
      source: `webhook:${from.hook}/${from.webhook}`,
      actor: envelope.source,
      deliveryId: from.deliveryId,
    },
    occurredAt: new Date(envelope.occurredAt),
    idempotencyKey: pending.key,
  };
}
