import type { PoolClient, Queryable } from "../db/index.ts";
import { CHECKPOINT_EVENT_TYPES, eventsOfTypes } from "../events/index.ts";
import { pausePoint } from "../pause-points.ts";
import {
  markLogReader,
  readAll,
  readStream,
  type LogPosition,
  type RecordedEvent,
} from "../store/index.ts";
import { readCheckpoint, tableIn } from "./schema.ts";
import type { ReadBatch } from "./shared-reads.ts";
import {
  applyFirstSnapshotsInBulk,
  isFirstSnapshot,
  type FirstSnapshotsOptions,
  type FirstSnapshotsOutcome,
} from "./first-snapshots.ts";
import type { AnyProjection } from "./types.ts";

/**
 * Each stream's last applied version, kept in memory by a replay into a new schema (which
 * starts with an empty `_streams` and is the only writer to it): `applyBatch` then neither
 * reads nor writes `_streams` for every batch, and `flushStreamVersions` writes them once.
 */
export interface StreamVersions {
  readonly versions: Map<string, number>;
  /** Streams whose version changed since the last flush. */
  readonly dirty: Set<string>;
}

export function streamVersions(): StreamVersions {
  return { versions: new Map(), dirty: new Set() };
}

/** Writes the versions a replay kept in memory to the schema's `_streams`. */
export async function flushStreamVersions(
  tx: PoolClient,
  schema: string,
  streams: StreamVersions,
): Promise<void> {
  const touched = [...streams.dirty];
  for (let start = 0; start < touched.length; start += 10_000) {
    const chunk = touched.slice(start, start + 10_000);
    await tx.query(
      `INSERT INTO ${tableIn(schema)("_streams")} (stream_id, version)
       SELECT * FROM unnest($1::text[], $2::bigint[])
       ON CONFLICT (stream_id) DO UPDATE SET version = EXCLUDED.version`,
      [chunk, chunk.map((id) => streams.versions.get(id))],
    );
  }
  streams.dirty.clear();
}

/**
 * Applies the next batch of the log to the projection's tables in `schema`, inside `tx`, and
 * moves the checkpoint in the same transaction. Returns how many log events it consumed.
 *
 * The caller holds the projection's lock (`lockProjection`), so two runners never apply the
 * same batch. The transaction is marked as a log reader (`markLogReader`) once it has events
 * to apply: it may not append from then on.
 *
 * Stream order: the log is read in (transaction id, position) order, and a stream's events
 * can come out of stream order. A transaction that took its id early (say with an earlier
 * write) and then waited for the stream's lock appends version n+1 with a lower transaction
 * id than the one that appended version n. So each stream's last applied version is kept in
 * `_streams`; an event that skips ahead pulls the missing versions from the stream first
 * (they committed before it, so they are readable), and an event already applied that way is
 * skipped when the global read reaches it.
 *
 * `options.read` reads the batch (`readAll` by default; the projector shares its reads among
 * the projections, `SharedLogReads`); `options.memory` keeps the streams' versions in memory
 * during a replay. The count returned is more than `batchSize` when a run of first snapshots
 * was built in bulk (`options.firstSnapshots`).
 */
export async function applyBatch(
  tx: PoolClient,
  projection: AnyProjection,
  schema: string,
  batchSize: number,
  options: {
    memory?: StreamVersions;
    read?: ReadBatch;
    /**
     * Build a run of first snapshots in bulk (`applyFirstSnapshotsInBulk`): `starting` is
     * awaited once the batch read shows one coming, before anything is applied; `done` is told.
     */
    firstSnapshots?: FirstSnapshotsOptions & {
      starting?: () => Promise<void>;
      done?: (outcome: FirstSnapshotsOutcome) => void;
    };
  } = {},
): Promise<number> {
  const { memory, read = readAll, firstSnapshots } = options;
  const checkpoint = await readCheckpoint(tx, schema);
  if (!checkpoint) throw new Error(`projection schema ${schema} is missing`);
  const batch = await read(tx, checkpoint, batchSize);
  if (batch.length === 0) return 0;
  // A full batch that ends in first snapshots is most likely the head of a first import: the
  // whole run is built set-wise instead (the batch read is what tells, so tailing costs no
  // query more), after the events before it (a token made before the first start, say).
  let head = batch.length;
  if (firstSnapshots && batch.length === batchSize) {
    while (head > 0 && isFirstSnapshot(batch[head - 1]!)) head--;
  }
  if (firstSnapshots && head < batch.length) await firstSnapshots.starting?.();
  await pausePoint("projector.batch.beforeApply", projection.name);
  // Its xid no longer holds back the other readers of the log while it applies.
  await markLogReader(tx);
  const events = batch.slice(0, head);
  let after: LogPosition = checkpoint;
  if (events.length > 0) {
    await applyEvents(tx, projection, schema, events, memory);
    after = events.at(-1)!;
    await writeCheckpoint(tx, schema, after);
  }
  if (firstSnapshots && head < batch.length) {
    const bulk = await applyFirstSnapshotsInBulk(tx, projection, schema, after, firstSnapshots);
    if (bulk) {
      await writeCheckpoint(tx, schema, bulk.through);
      firstSnapshots.done?.(bulk);
      return events.length + bulk.events;
    }
    const rest = batch.slice(head);
    await applyEvents(tx, projection, schema, rest, memory);
    await writeCheckpoint(tx, schema, rest.at(-1)!);
  }
  return batch.length;
}

/**
 * Applies `events`, the log's next events after the schema's checkpoint in log order (read
 * by the caller), inside `tx`. The caller moves the checkpoint (`writeCheckpoint`).
 */
export async function applyEvents(
  tx: PoolClient,
  projection: AnyProjection,
  schema: string,
  events: readonly RecordedEvent[],
  memory?: StreamVersions,
): Promise<void> {
  if (events.length === 0) return;

  const table = tableIn(schema);
  let applied: Map<string, number>;
  if (memory) {
    applied = memory.versions;
  } else {
    const streamIds = [...new Set(events.map((e) => e.streamId))];
    const known = await tx.query<{ stream_id: string; version: number }>(
      `SELECT stream_id, version FROM ${table("_streams")} WHERE stream_id = ANY($1::text[])`,
      [streamIds],
    );
    applied = new Map(known.rows.map((r) => [r.stream_id, r.version]));
  }
  const ordered = await inStreamOrder(tx, events, applied);

  const relevant = eventsOfTypes(ordered, new Set<string>(projection.handles));
  if (relevant.length > 0) await projection.apply(relevant, { tx, table });

  if (memory) {
    for (const event of ordered) memory.dirty.add(event.streamId);
  } else {
    const touched = [...new Set(ordered.map((e) => e.streamId))];
    if (touched.length > 0) {
      await tx.query(
        `INSERT INTO ${table("_streams")} (stream_id, version)
         SELECT * FROM unnest($1::text[], $2::bigint[])
         ON CONFLICT (stream_id) DO UPDATE SET version = EXCLUDED.version`,
        [touched, touched.map((id) => applied.get(id))],
      );
    }
  }
}

/**
 * `events`, the log's next events in log order, as they are to be applied: each stream's
 * events in version order, each once. `applied` holds each stream's last applied version and
 * is moved past the events returned. An event already applied is left out; one that skips
 * ahead is preceded by the versions it skips, read from its stream (see `applyBatch`).
 */
export async function inStreamOrder(
  db: Queryable,
  events: readonly RecordedEvent[],
  applied: Map<string, number>,
): Promise<RecordedEvent[]> {
  const ordered: RecordedEvent[] = [];
  for (const event of events) {
    const before = applied.get(event.streamId) ?? 0;
    if (event.streamVersion <= before) continue;
    // A checkpoint holds its stream's whole state at the retention horizon, in the place of
    // the last event it replaced: the versions before it are gone, and need not be applied.
    if (event.streamVersion > before + 1 && !CHECKPOINT_EVENT_TYPES.has(event.type)) {
      const missing = await readStream(db, event.streamId, {
        fromVersion: before + 1,
        toVersion: event.streamVersion - 1,
      });
      if (missing.length !== event.streamVersion - 1 - before) {
        throw new Error(
          `stream ${event.streamId} lacks versions ${before + 1}..${event.streamVersion - 1}`,
        );
      }
      ordered.push(...missing);
    }
    ordered.push(event);
    applied.set(event.streamId, event.streamVersion);
  }
  return ordered;
}

/** Moves the schema's checkpoint to `position`: everything up to it is applied. */
export async function writeCheckpoint(
  tx: Queryable,
  schema: string,
  position: LogPosition,
): Promise<void> {
  await tx.query(
    `UPDATE ${tableIn(schema)("_checkpoint")}
        SET transaction_id = $1, position = $2, updated_at = now()`,
    [position.transactionId, position.position],
  );
}

/**
 * Takes the lock that serialises work on one schema of a projection for the rest of `tx`.
 * A transaction-level advisory lock: it assigns no transaction id, so it does not hold back
 * the log's safe bound the way a row lock would.
 */
export async function lockProjection(
  tx: PoolClient,
  schema: string,
  options: { readonly commitWithoutWaiting?: boolean } = {},
): Promise<void> {
  // `commitWithoutWaiting`: `SET LOCAL synchronous_commit = off` in the same statement.
  await tx.query(
    options.commitWithoutWaiting
      ? "SELECT set_config('synchronous_commit', 'off', true), pg_advisory_xact_lock(hashtext($1))"
      : "SELECT pg_advisory_xact_lock(hashtext($1))",
    [`annal:${schema}`],
  );
}
