import type { PoolClient, Queryable } from "../db/index.ts";
import { eventsAppended } from "../metrics.ts";
import { checkExpectedVersion, newEventId } from "./append.ts";
import { copyEvents, type EventCopyRow } from "./copy-events.ts";
import { runInSlices } from "../slices.ts";
import { isLargeJson, jsonText, jsonTextSlices } from "./json-text.ts";
import { EVENTS_CHANNEL, announceAppend } from "./notify.ts";
import type { ExpectedVersion, NewEvent } from "./types.ts";

export interface StreamAppend {
  readonly streamId: string;
  readonly events: readonly NewEvent[];
  readonly expectedVersion?: ExpectedVersion;
}

/**
 * A place in the order events are inserted: every event inserted after `appendMark` returns
 * has a higher position than `position`. (Positions are drawn from a sequence at insert
 * time; an event drawn before the mark and not yet committed may be above it too, so a
 * stream found "moved since" a mark may have moved just before it: the test errs that way.)
 */
export interface AppendMark {
  readonly position: number;
}

/** Marks the present place in the order events are inserted (see `AppendMark`). */
export async function appendMark(db: Queryable): Promise<AppendMark> {
  const result = await db.query<{ position: string }>(
    "SELECT coalesce(max(position), 0) AS position FROM events",
  );
  return { position: Number(result.rows[0]!.position) };
}

export interface AppendToStreamsOptions {
  /**
   * Leave out every stream that an event was appended to after this mark. Decided with the
   * streams locked, so no append can come between the decision and this one: for a writer
   * whose events describe what it read after the mark (a snapshot of the directory), which
   * must not land on top of a newer change another writer recorded meanwhile.
   */
  readonly unmovedSince?: AppendMark;
}

/**
 * Appends to many streams in the caller's transaction with a constant number of statements:
 * lock every stream and move its version by the events offered (one upsert), check versions,
 * insert every event (one COPY, `copyEvents`). For bulk work such as a directory import, where
 * one `appendToStream` per entry would cost a round trip per statement per entry.
 *
 * The upsert moves each version before anything is decided, so that the common case needs no
 * second pass over the streams (with a separate UPDATE, that pass cost an import as much of
 * PostgreSQL's time as the COPY of the events). A stream that ends up with fewer events than
 * offered (it moved since the mark, or an event's key is stored) is set back by one UPDATE of
 * those streams only; a failed version check throws, and the caller's transaction is rolled back.
 *
 * Idempotency keys work as in `appendToStream`: an event whose key is stored is skipped.
 * Returns how many events were stored.
 */
export async function appendToStreams(
  tx: PoolClient,
  appends: readonly StreamAppend[],
  options: AppendToStreamsOptions = {},
): Promise<number> {
  if (appends.length === 0) return 0;
  const ids = appends.map((a) => a.streamId);
  if (new Set(ids).size !== ids.length) throw new Error("appendToStreams: a stream appears twice");
  // Locks are taken in stream id order, so two bulk appends cannot deadlock on each other.
  // A stream's version before is its version after less the events offered to it. The
  // database's clock comes with them, for the events' recorded_at (and occurred_at where none
  // is given): COPY cannot fall back to a column's default row by row.
  const offered = new Map(appends.map((a) => [a.streamId, a.events.length]));
  const locked = await tx.query<{ stream_id: string; version: number; now: Date }>(
    `INSERT INTO streams (stream_id, version)
     SELECT * FROM unnest($1::text[], $2::bigint[]) AS s(stream_id, version) ORDER BY stream_id
     ON CONFLICT (stream_id) DO UPDATE
       SET version = streams.version + EXCLUDED.version, updated_at = now()
     RETURNING stream_id, version, statement_timestamp() AS now`,
    [ids, [...offered.values()]],
  );
  const versions = new Map(
    locked.rows.map((r) => [r.stream_id, r.version - offered.get(r.stream_id)!]),
  );
  const recordedAt = locked.rows[0]!.now;
  // A stream at version 0 has no event, so none appended after the mark: a first import
  // asks nothing.
  const held = ids.filter((id) => versions.get(id)! > 0);
  const moved =
    options.unmovedSince && held.length > 0
      ? await movedSince(tx, held, options.unmovedSince)
      : new Set<string>();
  const keys = appends.flatMap((a) =>
    a.events.flatMap((e) => (e.idempotencyKey ? [e.idempotencyKey] : [])),
  );
  const stored = await storedIdempotencyKeys(tx, keys);

  const rows: EventCopyRow[] = [];
  /** Streams that take fewer events than they were offered, and their right versions. */
  const setBack: [string, number][] = [];
  for (const append of appends) {
    const current = versions.get(append.streamId)!;
    const fresh = moved.has(append.streamId)
      ? []
      : append.events.filter((e) => !e.idempotencyKey || !stored.has(e.idempotencyKey));
    if (fresh.length < append.events.length) {
      setBack.push([append.streamId, current + fresh.length]);
    }
    if (fresh.length === 0) continue;
    checkExpectedVersion(append.streamId, append.expectedVersion ?? "any", current);
    for (const [i, event] of fresh.entries()) {
      rows.push({
        id: event.id ?? newEventId(),
        streamId: append.streamId,
        version: current + i + 1,
        type: event.type,
        // A huge snapshot's text is made piece by piece as the COPY sends it, and its length
        // counted a slice at a time (`jsonTextSlices`).
        data: isLargeJson(event.data)
          ? await runInSlices(jsonTextSlices(event.data))
          : jsonText(event.data ?? null),
        metadata: JSON.stringify(event.metadata ?? {}),
        idempotencyKey: event.idempotencyKey ?? null,
        occurredAt: event.occurredAt ?? recordedAt,
        recordedAt,
      });
    }
  }
  if (setBack.length > 0) {
    await tx.query(
      `UPDATE streams SET version = v.version
         FROM unnest($1::text[], $2::bigint[]) AS v(stream_id, version)
        WHERE streams.stream_id = v.stream_id`,
      [setBack.map(([id]) => id), setBack.map(([, v]) => v)],
    );
  }
  if (rows.length === 0) return 0;
  await copyEvents(tx, rows);
  // Announced once the caller's transaction commits, or inside it (`announceAppend`).
  if (announceAppend(tx).inStatement) await tx.query("SELECT pg_notify($1, '')", [EVENTS_CHANNEL]);
  eventsAppended.inc(rows.length);
  return rows.length;
}

/**
 * Which of `streamIds` had an event appended after `mark`: those whose last event (by
 * version) has a higher position. A stream's versions and positions are drawn in the same
 * order, under its row's lock, so its last event is the one inserted last. Run after the
 * streams are locked, in a statement of its own: its snapshot then holds what an append that
 * held a lock before this transaction committed.
 */
async function movedSince(
  tx: Queryable,
  streamIds: readonly string[],
  mark: AppendMark,
): Promise<Set<string>> {
  const result = await tx.query<{ stream_id: string }>(
    `SELECT s.stream_id FROM unnest($1::text[]) AS s(stream_id)
      WHERE (SELECT e.position FROM events AS e WHERE e.stream_id = s.stream_id
              ORDER BY e.stream_version DESC LIMIT 1) > $2::bigint`,
    [streamIds, mark.position],
  );
  return new Set(result.rows.map((row) => row.stream_id));
}

/** Those of `keys` that events in the log already carry as their idempotency key. */
export async function storedIdempotencyKeys(
  db: Queryable,
  keys: readonly string[],
): Promise<Set<string>> {
  if (keys.length === 0) return new Set();
  const found = await db.query<{ key: string }>(
    "SELECT idempotency_key AS key FROM events WHERE idempotency_key = ANY($1::text[])",
    [keys],
  );
  return new Set(found.rows.map((row) => row.key));
}
