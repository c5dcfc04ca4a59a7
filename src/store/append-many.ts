import type { PoolClient, Queryable } from "../db/index.ts";
import { eventsAppended } from "../metrics.ts";
import { EVENTS_CHANNEL, checkExpectedVersion, newEventId } from "./append.ts";
import { copyEvents, type EventCopyRow } from "./copy-events.ts";
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
 * lock every stream (one upsert), check versions, insert every event (one COPY, `copyEvents`),
 * move every stream's version (one UPDATE). For bulk work such as a directory import, where one
 * `appendToStream` per entry would cost a round trip per statement per entry.
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
  // The database's clock comes with them, for the events' recorded_at (and occurred_at where
  // none is given): COPY cannot fall back to a column's default row by row.
  const locked = await tx.query<{ stream_id: string; version: number; now: Date }>(
    `INSERT INTO streams (stream_id, version)
     SELECT stream_id, 0 FROM unnest($1::text[]) AS s(stream_id) ORDER BY stream_id
     ON CONFLICT (stream_id) DO UPDATE SET updated_at = now()
     RETURNING stream_id, version, statement_timestamp() AS now`,
    [ids],
  );
  const versions = new Map(locked.rows.map((r) => [r.stream_id, r.version]));
  const recordedAt = locked.rows[0]!.now;
  const moved = options.unmovedSince
    ? await movedSince(tx, ids, options.unmovedSince)
    : new Set<string>();
  const keys = appends.flatMap((a) =>
    a.events.flatMap((e) => (e.idempotencyKey ? [e.idempotencyKey] : [])),
  );
  const stored = new Set<string>();
  if (keys.length > 0) {
    const found = await tx.query<{ key: string }>(
      "SELECT idempotency_key AS key FROM events WHERE idempotency_key = ANY($1::text[])",
      [keys],
    );
    for (const row of found.rows) stored.add(row.key);
  }

  const rows: EventCopyRow[] = [];
  const finalVersions: [string, number][] = [];
  for (const append of appends) {
    if (moved.has(append.streamId)) continue;
    const fresh = append.events.filter((e) => !e.idempotencyKey || !stored.has(e.idempotencyKey));
    if (fresh.length === 0) continue;
    const current = versions.get(append.streamId) ?? 0;
    checkExpectedVersion(append.streamId, append.expectedVersion ?? "any", current);
    fresh.forEach((event, i) => {
      rows.push({
        id: event.id ?? newEventId(),
        streamId: append.streamId,
        version: current + i + 1,
        type: event.type,
        data: JSON.stringify(event.data ?? null),
        metadata: JSON.stringify(event.metadata ?? {}),
        idempotencyKey: event.idempotencyKey ?? null,
        occurredAt: event.occurredAt ?? recordedAt,
        recordedAt,
      });
    });
    finalVersions.push([append.streamId, current + fresh.length]);
  }
  if (rows.length === 0) return 0;
  await copyEvents(tx, rows);
  await tx.query(
    `UPDATE streams SET version = v.version
       FROM unnest($1::text[], $2::bigint[]) AS v(stream_id, version)
      WHERE streams.stream_id = v.stream_id`,
    [finalVersions.map(([id]) => id), finalVersions.map(([, v]) => v)],
  );
  await tx.query("SELECT pg_notify($1, '')", [EVENTS_CHANNEL]);
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
