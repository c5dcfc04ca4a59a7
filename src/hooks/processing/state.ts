import type { Queryable } from "../../db/index.ts";
import { CHANGE_EVENT, type ProcessingError } from "../../events/index.ts";
import { changeEventKey, sourceStream } from "../ingress/envelope.ts";

/**
 * Where a change event's processing stands, from the latest of its outcome events:
 * - `received`: accepted, no attempt has ended yet;
 * - `retrying`: an attempt failed and another follows (or failed work was retried);
 * - `processed`: the provider succeeded (`result` is what it resolved with);
 * - `abandoned`: failed for good, under failed work (`error` says why).
 */
export type ChangeEventState =
  | { readonly state: "received" }
  | { readonly state: "retrying"; readonly attempt: number; readonly error: ProcessingError | null }
  | { readonly state: "processed"; readonly attempt: number; readonly result: unknown }
  | { readonly state: "abandoned"; readonly attempts: number; readonly error: ProcessingError };

const OUTCOMES = [
  CHANGE_EVENT.processed,
  CHANGE_EVENT.failed,
  CHANGE_EVENT.abandoned,
  CHANGE_EVENT.retryRequested,
];

/**
 * The processing state of change event `source`/`eventId`, or undefined when annal never
 * accepted it. Every event of a change event's life is on its source's stream, so the latest
 * outcome is the one with the highest stream version: within one stream, its version is the
 * order the appends were made in (optimistic concurrency), whatever order they commit in.
 */
export async function changeEventState(
  db: Queryable,
  source: string,
  eventId: string,
): Promise<ChangeEventState | undefined> {
  const { rows } = await db.query<{ type: string; data: Record<string, unknown> }>(
    `SELECT type, data FROM events
      WHERE stream_id = $1 AND data->>'eventId' = $2 AND type = ANY($3::text[])
      ORDER BY stream_version DESC LIMIT 1`,
    [sourceStream(source), eventId, OUTCOMES],
  );
  const latest = rows[0];
  if (latest === undefined) {
    const received = await db.query("SELECT 1 FROM events WHERE idempotency_key = $1", [
      changeEventKey(source, eventId),
    ]);
    return received.rowCount === 0 ? undefined : { state: "received" };
  }
  const data = latest.data;
  switch (latest.type) {
    case CHANGE_EVENT.processed:
      return { state: "processed", attempt: Number(data.attempt), result: data.result ?? null };
    case CHANGE_EVENT.abandoned:
      return {
        state: "abandoned",
        attempts: Number(data.attempts),
        error: data.error as ProcessingError,
      };
    case CHANGE_EVENT.failed:
      return data.willRetry === true
        ? { state: "retrying", attempt: Number(data.attempt), error: data.error as ProcessingError }
        : { state: "received" }; // its abandonment follows
    default:
      return { state: "retrying", attempt: Number(data.attempts), error: null };
  }
}
