import { CHANGE_EVENT } from "../../src/events/index.ts";
import type { Projection } from "../../src/projector/index.ts";
import { FAILED_WORK_PROJECTION, failedWorkTables } from "./tables.ts";

/**
 * `failed_work`: change events whose processing failed permanently (a `PermanentFailure`, or
 * every retry used up), one row per change event, keyed by its `ChangeEventReceived` id. A row
 * stays when the event is retried (`retrying`) and when a retry succeeds (`resolved`), so the
 * list also answers "what failed and what became of it".
 */
export const failedWorkProjection: Projection<
  | typeof CHANGE_EVENT.abandoned
  | typeof CHANGE_EVENT.retryRequested
  | typeof CHANGE_EVENT.failed
  | typeof CHANGE_EVENT.processed
> = {
  name: FAILED_WORK_PROJECTION,
  version: 2,
  handles: [
    CHANGE_EVENT.abandoned,
    CHANGE_EVENT.retryRequested,
    CHANGE_EVENT.failed,
    CHANGE_EVENT.processed,
  ],
  tables: failedWorkTables,
  async apply(events, { tx, table }) {
    const rows = table("failed_work");
    for (const event of events) {
      switch (event.type) {
        case CHANGE_EVENT.abandoned: {
          const data = event.data;
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
          const data = event.data;
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
          const data = event.data;
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
            [event.data.receivedEventId, event.recordedAt, event.position, event.data.attempt],
          );
          break;
      }
    }
  },
};
