import { withTransaction, type Queryable } from "../../db/index.ts";
import type { Jobs } from "../../jobs/index.ts";
import {
  FAILED_WORK,
  FAILED_WORK_STATES,
  type FailedWorkRow,
  type FailedWorkState,
} from "../../../projections/failed-work/index.ts";
import type { EventStore } from "../../store/index.ts";
import { sourceStream } from "../ingress/envelope.ts";
import {
  FailedWorkNotFoundError,
  FailedWorkResolvedError,
  FailedWorkUnavailableError,
} from "../errors.ts";
import {
  CHANGE_EVENT,
  type ChangeEventAbandoned,
  type ChangeEventRetryRequested,
} from "../../events/index.ts";
import { CHANGE_EVENTS_QUEUE, jobOptions, type ChangeEventJob } from "../processing/queue.ts";
import type { HooksRegistry } from "../definition/registry.ts";

export { FAILED_WORK_STATES, type FailedWorkState };

/** One change event whose processing failed permanently. */
export interface FailedWork {
  /** The id of its `ChangeEventReceived` event: what `retryFailedWork` takes. */
  readonly id: string;
  readonly hook: string;
  readonly webhook: string;
  readonly source: string;
  readonly eventId: string;
  readonly type: string;
  readonly subject: string;
  /** `failed`; `retrying` after a retry was asked for; `resolved` once a retry succeeded. */
  readonly state: FailedWorkState;
  readonly attempts: number;
  readonly reason: ChangeEventAbandoned["reason"];
  readonly lastError: { readonly code: string | null; readonly message: string };
  readonly failedAt: Date;
  readonly retries: number;
  readonly retriedAt: Date | null;
  readonly resolvedAt: Date | null;
}

export interface ListFailedWorkOptions {
  /** Which states; default `["failed", "retrying"]` (what still needs attention). */
  readonly states?: readonly FailedWorkState[];
  /** Default 100, at most 1000. */
  readonly limit?: number;
}

/** Failed work, the most recent failure first (the `failed_work` projection). */
export async function listFailedWork(
  db: Queryable,
  options: ListFailedWorkOptions = {},
): Promise<FailedWork[]> {
  const states = options.states ?? ["failed", "retrying"];
  const limit = Math.min(Math.max(options.limit ?? 100, 1), 1000);
  const result = await readProjection(() =>
    db.query<FailedWorkRow>(
      `SELECT * FROM ${FAILED_WORK} WHERE state = ANY($1::text[]) ORDER BY failed_at DESC, id LIMIT $2`,
      [states, limit],
    ),
  );
  return result.rows.map(toFailedWork);
}

/** One failed work item, or undefined. */
export async function getFailedWork(db: Queryable, id: string): Promise<FailedWork | undefined> {
  if (!UUID.test(id)) return undefined;
  const result = await readProjection(() =>
    db.query<FailedWorkRow>(`SELECT * FROM ${FAILED_WORK} WHERE id = $1`, [id]),
  );
  const row = result.rows[0];
  return row && toFailedWork(row);
}

export interface RetryFailedWorkDependencies {
  readonly store: EventStore;
  readonly jobs: Jobs;
  /** The providers' retry settings; without it (or for a hook gone since), the defaults. */
  readonly registry?: HooksRegistry;
}

export interface RetryResult {
  readonly id: string;
  /** False when a retry of this failure had been asked for already (nothing new was queued). */
  readonly queued: boolean;
}

/**
 * Processes failed work again: records `ChangeEventRetryRequested` and queues a job, in one
 * transaction. Two requests for the same failure (a double click, two operators) queue one
 * job: the event's idempotency key names the failure by its attempt count, so the second
 * finds the first's event and queues nothing.
 *
 * @throws FailedWorkNotFoundError `ANNAL_FAILED_WORK_NOT_FOUND` (404);
 *   FailedWorkResolvedError `ANNAL_FAILED_WORK_RESOLVED` (409) when a retry succeeded since.
 */
export async function retryFailedWork(
  deps: RetryFailedWorkDependencies,
  id: string,
  options: { requestedBy?: string } = {},
): Promise<RetryResult> {
  const work = await getFailedWork(deps.store.pool, id);
  if (!work) throw new FailedWorkNotFoundError(id);
  if (work.state === "resolved") throw new FailedWorkResolvedError(id);
  const provider = deps.registry?.hook(work.hook)?.provider;
  const data: ChangeEventRetryRequested = {
    hook: work.hook,
    webhook: work.webhook,
    source: work.source,
    eventId: work.eventId,
    receivedEventId: work.id,
    attempts: work.attempts,
    requestedBy: options.requestedBy ?? null,
  };
  const queued = await withTransaction(deps.store.pool, async (tx) => {
    const { appended } = await deps.store.appendToStream(
      sourceStream(work.source),
      [
        {
          type: CHANGE_EVENT.retryRequested,
          data,
          metadata: { causationId: work.id, correlationId: work.id, actor: data.requestedBy },
          idempotencyKey: `change-event-retry:${work.id}:${work.attempts}`,
        },
      ],
      { tx },
    );
    if (appended === 0) return false;
    const job: ChangeEventJob = { receivedEventId: work.id, priorAttempts: work.attempts };
    await deps.jobs.boss.send(CHANGE_EVENTS_QUEUE, job, {
      ...jobOptions(provider, work),
      db: deps.jobs.inTransaction(tx),
    });
    return true;
  });
  return { id, queued };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function readProjection<T>(query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (error) {
    // 3F000: no such schema; 42P01: no such table. The projector has not built it yet.
    const code = (error as { code?: string }).code;
    if (code === "3F000" || code === "42P01") throw new FailedWorkUnavailableError(error);
    throw error;
  }
}

function toFailedWork(row: FailedWorkRow): FailedWork {
  return {
    id: row.id,
    hook: row.hook,
    webhook: row.webhook,
    source: row.source,
    eventId: row.event_id,
    type: row.type,
    subject: row.subject,
    state: row.state,
    attempts: row.attempts,
    reason: row.reason,
    lastError: { code: row.last_error_code, message: row.last_error },
    failedAt: row.failed_at,
    retries: row.retries,
    retriedAt: row.retried_at,
    resolvedAt: row.resolved_at,
  };
}
