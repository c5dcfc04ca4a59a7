import { randomUUID } from "node:crypto";
import type { Queryable } from "../db/index.ts";
import { pausePoint } from "../pause-points.ts";
import { WrongExpectedVersionError } from "./errors.ts";
import { logOrder } from "./log-order.ts";
import { eventColumns, toRecordedEvent, type EventRow } from "./rows.ts";
import type { ExpectedVersion, NewEvent, RecordedEvent } from "./types.ts";

/** The channel an append notifies on commit; tailing readers LISTEN to it. */
export const EVENTS_CHANNEL = "annal_events";

export interface AppendResult {
  /** The stream's version after the append. */
  readonly version: number;
  /** One recorded event per event given, in order: new ones, or the originals of repeats. */
  readonly events: readonly RecordedEvent[];
  /** How many of them this call stored (0 when every idempotency key was already known). */
  readonly appended: number;
}

/**
 * Appends `events` to `streamId` inside the caller's transaction (`tx` must be in one).
 *
 * The stream's row is locked first (an upsert), so appends to one stream are serialised and
 * the version check below cannot race. Events whose idempotency key is already stored are not
 * appended again; when that is all of them the call is a repeat and succeeds without a
 * version check (the first attempt's outcome stands), returning the stored events.
 */
export async function appendInTransaction(
  tx: Queryable,
  streamId: string,
  events: readonly NewEvent[],
  expectedVersion: ExpectedVersion,
): Promise<AppendResult> {
  const locked = await tx.query<{ version: number }>(
    `INSERT INTO streams (stream_id, version) VALUES ($1, 0)
     ON CONFLICT (stream_id) DO UPDATE SET updated_at = now()
     RETURNING version`,
    [streamId],
  );
  const current = locked.rows[0]?.version ?? 0;

  const stored = await storedByKey(tx, events);
  const fresh = events.filter(
    (e) => e.idempotencyKey === undefined || !stored.has(e.idempotencyKey),
  );
  if (fresh.length === 0 && events.length > 0) {
    return {
      version: current,
      events: events.map((e) => stored.get(e.idempotencyKey!)!),
      appended: 0,
    };
  }
  checkExpectedVersion(streamId, expectedVersion, current);

  const inserted = await tx.query<EventRow>(
    `WITH inserted AS (
       INSERT INTO events (id, stream_id, stream_version, type, data, metadata, idempotency_key, occurred_at)
       SELECT e.id, $1, $2::bigint + e.ordinal, e.type, e.data, e.metadata, e.key,
              coalesce(e.occurred_at, statement_timestamp())
         FROM unnest($3::uuid[], $4::text[], $5::jsonb[], $6::jsonb[], $7::text[], $8::timestamptz[])
              WITH ORDINALITY AS e(id, type, data, metadata, key, occurred_at, ordinal)
       RETURNING *
     ), stream AS (
       UPDATE streams SET version = $2::bigint + $9::bigint WHERE stream_id = $1
     ), notified AS (
       SELECT pg_notify('${EVENTS_CHANNEL}', '')
     )
     SELECT ${eventColumns("inserted")} FROM inserted, notified ORDER BY ${logOrder("inserted")}`,
    [
      streamId,
      current,
      fresh.map((e) => e.id ?? randomUUID()),
      fresh.map((e) => e.type),
      fresh.map((e) => JSON.stringify(e.data ?? null)),
      fresh.map((e) => JSON.stringify(e.metadata ?? {})),
      fresh.map((e) => e.idempotencyKey ?? null),
      fresh.map((e) => e.occurredAt?.toISOString() ?? null),
      fresh.length,
    ],
  );
  // Positions are drawn and the transaction is in flight: where a test stops a writer to
  // show that readers wait for it (test/store/concurrency.test.ts).
  await pausePoint("store.append.afterInsert", streamId);
  const recorded = inserted.rows.map((row) => toRecordedEvent(row));
  let next = 0;
  return {
    version: current + fresh.length,
    events: events.map((e) =>
      e.idempotencyKey !== undefined && stored.has(e.idempotencyKey)
        ? stored.get(e.idempotencyKey)!
        : recorded[next++]!,
    ),
    appended: fresh.length,
  };
}

/** Throws WrongExpectedVersionError unless `actual` is what the appender expected. */
export function checkExpectedVersion(
  streamId: string,
  expected: ExpectedVersion,
  actual: number,
): void {
  const ok =
    expected === "any" ||
    (expected === "no_stream" && actual === 0) ||
    (expected === "exists" && actual > 0) ||
    expected === actual;
  if (!ok) throw new WrongExpectedVersionError(streamId, expected, actual);
}

async function storedByKey(
  tx: Queryable,
  events: readonly NewEvent[],
): Promise<Map<string, RecordedEvent>> {
  const keys = events.flatMap((e) => (e.idempotencyKey === undefined ? [] : [e.idempotencyKey]));
  if (keys.length === 0) return new Map();
  const found = await tx.query<EventRow>(
    `SELECT ${eventColumns("e")} FROM events AS e WHERE e.idempotency_key = ANY($1::text[])`,
    [keys],
  );
  return new Map(found.rows.map((row) => [row.idempotency_key!, toRecordedEvent(row)]));
}
