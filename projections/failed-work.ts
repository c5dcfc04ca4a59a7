import {
  CHANGE_EVENT,
  type ChangeEventAbandoned,
  type ChangeEventFailed,
  type ChangeEventProcessed,
  type ChangeEventRef,
  type ChangeEventRetryRequested,
} from "../src/hooks/events.ts";
import type { Projection } from "../src/projector/index.ts";

/**
 * `failed_work`: change events whose processing failed permanently (a `PermanentFailure`, or
 * every retry used up), one row per change event, keyed by its `ChangeEventReceived` id. A row
 * stays when the event is retried (`retrying`) and when a retry succeeds (`resolved`), so the
 * list also answers "what failed and what became of it".
 */
export const failedWorkProjection: Projection = {
  name: "failed_work",
  version: 2,
  handles: [
    CHANGE_EVENT.abandoned,
    CHANGE_EVENT.retryRequested,
    CHANGE_EVENT.failed,
    CHANGE_EVENT.processed,
  ],
  tables: (table) => [
    `CREATE TABLE ${table("failed_work")} (
       id uuid PRIMARY KEY,
       hook text NOT NULL,
       webhook text NOT NULL,
       source text NOT NULL,
       event_id text NOT NULL,
       type text NOT NULL,
       subject text NOT NULL,
       state text NOT NULL CHECK (state IN ('failed', 'retrying', 'resolved')),
       attempts integer NOT NULL,
       reason text NOT NULL,
       last_error_code text,
       last_error text NOT NULL,
       failed_at timestamptz NOT NULL,
       retries integer NOT NULL DEFAULT 0,
       retried_at timestamptz,
       resolved_at timestamptz,
       position bigint NOT NULL)`,
    `CREATE INDEX ON ${table("failed_work")} (state, failed_at DESC)`,
    `CREATE INDEX ON ${table("failed_work")} (source, event_id)`,
  ],
  async apply(events, { tx, table }) {
    const rows = table("failed_work");
    for (const event of events) {
      const ref = event.data as ChangeEventRef;
      switch (event.type) {
        case CHANGE_EVENT.abandoned: {
          const data = event.data as ChangeEventAbandoned;
          await tx.query(
            `INSERT INTO ${rows} AS f (id, hook, webhook, source, event_id, type, subject, state,
                attempts, reason, last_error_code, last_error, failed_at, position)
             VALUES ($1, $2, $3, $4, $5, $6, $7, 'failed', $8, $9, $10, $11, $12, $13)
             ON CONFLICT (id) DO UPDATE SET state = 'failed', attempts = EXCLUDED.attempts,
               reason = EXCLUDED.reason, last_error_code = EXCLUDED.last_error_code,
               last_error = EXCLUDED.last_error, failed_at = EXCLUDED.failed_at,
               resolved_at = NULL, position = EXCLUDED.position`,
            [
              data.receivedEventId,
              data.hook,
              data.webhook,
              data.source,
              data.eventId,
              data.type,
              data.subject,
              data.attempts,
              data.reason,
              data.error.code,
              data.error.message,
              event.recordedAt,
              event.position,
            ],
          );
          break;
        }
        case CHANGE_EVENT.retryRequested: {
          const data = event.data as ChangeEventRetryRequested;
          await tx.query(
            `UPDATE ${rows} SET state = 'retrying', retries = retries + 1, retried_at = $2,
               position = $3
             WHERE id = $1`,
            [data.receivedEventId, event.recordedAt, event.position],
          );
          break;
        }
        case CHANGE_EVENT.failed: {
          // Only rows being retried move: the first round's failures are not failed work yet.
          const data = event.data as ChangeEventFailed;
          await tx.query(
            `UPDATE ${rows} SET attempts = $2, last_error_code = $3, last_error = $4, position = $5
             WHERE id = $1 AND state = 'retrying'`,
            [
              data.receivedEventId,
              data.attempt,
              data.error.code,
              data.error.message,
              event.position,
            ],
          );
          break;
        }
        case CHANGE_EVENT.processed:
          await tx.query(
            `UPDATE ${rows} SET state = 'resolved', resolved_at = $2, position = $3,
               attempts = greatest(attempts, $4)
             WHERE id = $1`,
            [
              ref.receivedEventId,
              event.recordedAt,
              event.position,
              (event.data as ChangeEventProcessed).attempt,
            ],
          );
          break;
      }
    }
  },
};
