import type { JobWithMetadata } from "pg-boss";
import type { Logger } from "../../logger.ts";
import type { EventStore } from "../../store/index.ts";
import { causedBy } from "./attempt.ts";
import { sourceStream } from "../ingress/envelope.ts";
import {
  CHANGE_EVENT,
  type ChangeEventAbandoned,
  type ChangeEventReceived,
} from "../../events/index.ts";
import { CHANGE_EVENTS_QUEUE, type ChangeEventJob } from "./queue.ts";
import type { Jobs } from "../../jobs/index.ts";

/** What an abandonment from the dead-letter queue records as its error. */
const ATTEMPT_LOST = {
  code: "ANNAL_HOOK_ATTEMPT_LOST",
  message:
    "the last attempt ended without an outcome: its worker stopped, or could not record what happened",
};

/**
 * Settles a job pg-boss gave up on without the worker settling it (the worker died during
 * the last attempt and the job expired, or the outcome could not be recorded): records
 * `ChangeEventAbandoned` (`attempt_lost`), so the change event shows under failed work and
 * never vanishes, unless its processing was settled after all; then deletes the original job,
 * whose failed row would otherwise hold its subject's key and stop the subject's later change
 * events for good.
 */
export async function settleDeadJob(
  deps: { readonly store: EventStore; readonly jobs: Jobs; readonly log: Logger },
  job: JobWithMetadata<ChangeEventJob>,
): Promise<void> {
  const { store, jobs, log } = deps;
  const received = await store.pool.query<{ id: string; data: ChangeEventReceived }>(
    "SELECT id, data FROM events WHERE id = $1 AND type = $2",
    [job.data.receivedEventId, CHANGE_EVENT.received],
  );
  const row = received.rows[0];
  if (row && !(await settled(store, row.id, row.data.envelope.source))) {
    const { envelope } = row.data;
    const ref = {
      hook: row.data.hook,
      webhook: row.data.webhook,
      source: envelope.source,
      eventId: envelope.eventId,
      receivedEventId: row.id,
    };
    const attempts = job.data.priorAttempts + (job.sourceRetryCount ?? 0) + 1;
    const abandoned: ChangeEventAbandoned = {
      ...ref,
      subject: envelope.subject,
      type: envelope.type,
      attempts,
      reason: "attempt_lost",
      error: ATTEMPT_LOST,
    };
    await store.appendToStream(sourceStream(envelope.source), [
      {
        type: CHANGE_EVENT.abandoned,
        data: abandoned,
        metadata: causedBy(ref),
        idempotencyKey: `change-event-outcome:${row.id}:${attempts}:lost`,
      },
    ]);
    log.warn(
      { source: ref.source, eventId: ref.eventId, attempts, code: ATTEMPT_LOST.code },
      "a change event's last attempt was lost; it is under failed work",
    );
  }
  if (job.sourceId) await jobs.boss.deleteJob(CHANGE_EVENTS_QUEUE, job.sourceId);
}

/**
 * Whether the change event's processing has an outcome that ends it (processed, or
 * abandoned) after its last retry request: then the dead job is a stale copy.
 */
/**
 * Whether the change event's processing is settled in the log: its last outcome (after
 * `afterVersion` of the source's stream, the received event's own version, which bounds the
 * scan to what came after it) is `ChangeEventProcessed` or `ChangeEventAbandoned`, not a
 * retry an operator asked for since.
 */
export async function settled(
  store: EventStore,
  receivedEventId: string,
  source: string,
  afterVersion = 0,
): Promise<boolean> {
  const last = await store.pool.query<{ type: string }>(
    `SELECT type FROM events
      WHERE stream_id = $1 AND stream_version > $4
        AND metadata->>'causationId' = $2 AND type = ANY($3::text[])
      ORDER BY stream_version DESC LIMIT 1`,
    [
      sourceStream(source),
      receivedEventId,
      [CHANGE_EVENT.processed, CHANGE_EVENT.abandoned, CHANGE_EVENT.retryRequested],
      afterVersion,
    ],
  );
  const type = last.rows[0]?.type;
  return type === CHANGE_EVENT.processed || type === CHANGE_EVENT.abandoned;
}
