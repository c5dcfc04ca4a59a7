import { withTransaction, type Pool, type Queryable } from "../db/index.ts";
import { workflowStream } from "../events/index.ts";
import type { Jobs } from "../jobs/index.ts";
import type { EventStore, ExpectedVersion, NewEvent, RecordedEvent } from "../store/index.ts";

/** The pg-boss queue whose jobs wake an instance: `{ instanceId }`. */
export const WAKE_QUEUE = "annal-workflow-wake";

export interface WakeJob {
  readonly instanceId: string;
}

/** A wake-up owed to an instance at a moment of the database's clock. */
export interface Timer {
  readonly instanceId: string;
  /** ISO 8601, the database's clock. */
  readonly dueAt: string;
  /** What it is for, for the operator reading the table: `retry 3`, `deadline 2`, ... */
  readonly reason: string;
}

/** What one decision of the engine writes, all in one transaction or none of it. */
export interface Commit {
  /** Appends, each with the version its stream must be at. */
  readonly appends: readonly {
    readonly streamId: string;
    readonly events: readonly NewEvent[];
    readonly expectedVersion: ExpectedVersion;
  }[];
  readonly timers?: readonly Timer[];
  /** Instances to wake once this commits. */
  readonly wakes?: readonly string[];
}

export interface CommitDeps {
  readonly pool: Pool;
  readonly store: EventStore;
  readonly jobs: Jobs;
}

/**
 * Writes a commit: its appends (optimistic: each states its stream's version), its timers and
 * its wake-up jobs, in one transaction, so that an event and the wake-up it asks for are
 * stored together or not at all. Returns the recorded events of each append, in order.
 */
export async function commit(deps: CommitDeps, work: Commit): Promise<RecordedEvent[][]> {
  const [only, ...more] = work.appends;
  if (only && more.length === 0 && !work.timers?.length && !work.wakes?.length) {
    // The common step: one append and nothing else, one statement that is its own
    // transaction (one round trip, where BEGIN, the append's statements and COMMIT took four).
    const result = await deps.store.appendToStream(only.streamId, only.events, {
      expectedVersion: only.expectedVersion,
    });
    return [[...result.events]];
  }
  return withTransaction(deps.pool, async (tx) => {
    const recorded: RecordedEvent[][] = [];
    for (const append of work.appends) {
      const result = await deps.store.appendToStream(append.streamId, append.events, {
        tx,
        expectedVersion: append.expectedVersion,
        // With no idempotency key there is no key for a concurrent append to race on: the
        // append is one statement (its stream's row is locked by its upsert).
        keysSerialised: append.events.every((event) => event.idempotencyKey === undefined),
      });
      recorded.push([...result.events]);
    }
    await insertTimers(tx, work.timers ?? []);
    await wake(deps.jobs, tx, work.wakes ?? []);
    return recorded;
  });
}

export async function insertTimers(tx: Queryable, timers: readonly Timer[]): Promise<void> {
  if (timers.length === 0) return;
  await tx.query(
    `INSERT INTO workflow_timers (instance_id, due_at, reason)
     SELECT * FROM unnest($1::uuid[], $2::timestamptz[], $3::text[])`,
    [timers.map((t) => t.instanceId), timers.map((t) => t.dueAt), timers.map((t) => t.reason)],
  );
}

/** Queues a wake-up job for each instance, inside `tx` when given. */
export async function wake(
  jobs: Jobs,
  tx: Queryable | undefined,
  instanceIds: readonly string[],
  options: { readonly startAfterSeconds?: number } = {},
): Promise<void> {
  const unique = [...new Set(instanceIds)];
  if (unique.length === 0) return;
  await jobs.boss.insert(
    WAKE_QUEUE,
    unique.map((instanceId) => ({
      data: { instanceId } satisfies WakeJob,
      ...(options.startAfterSeconds
        ? { startAfter: new Date(Date.now() + options.startAfterSeconds * 1000) }
        : {}),
    })),
    tx ? { db: jobs.inTransaction(tx) } : undefined,
  );
}

/** The instance's own stream's append for a commit. */
export function own(
  instanceId: string,
  events: readonly NewEvent[],
  expectedVersion: ExpectedVersion,
) {
  return { streamId: workflowStream(instanceId), events, expectedVersion };
}
