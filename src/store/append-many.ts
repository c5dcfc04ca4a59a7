import { randomUUID } from "node:crypto";
import type { Queryable } from "../db/index.ts";
import { eventsAppended } from "../metrics.ts";
import { EVENTS_CHANNEL, checkExpectedVersion } from "./append.ts";
import type { ExpectedVersion, NewEvent } from "./types.ts";

export interface StreamAppend {
  readonly streamId: string;
  readonly events: readonly NewEvent[];
  readonly expectedVersion?: ExpectedVersion;
}

/**
 * Appends to many streams in the caller's transaction with a constant number of statements:
 * lock every stream (one upsert), check versions, insert every event (one INSERT), move every
 * stream's version (one UPDATE). For bulk work such as a directory import, where one
 * `appendToStream` per entry would cost a round trip per statement per entry.
 *
 * Idempotency keys work as in `appendToStream`: an event whose key is stored is skipped.
 * Returns how many events were stored.
 */
export async function appendToStreams(
  tx: Queryable,
  appends: readonly StreamAppend[],
): Promise<number> {
  if (appends.length === 0) return 0;
  const ids = appends.map((a) => a.streamId);
  if (new Set(ids).size !== ids.length) throw new Error("appendToStreams: a stream appears twice");
  // Locks are taken in stream id order, so two bulk appends cannot deadlock on each other.
  const locked = await tx.query<{ stream_id: string; version: number }>(
    `INSERT INTO streams (stream_id, version)
     SELECT stream_id, 0 FROM unnest($1::text[]) AS s(stream_id) ORDER BY stream_id
     ON CONFLICT (stream_id) DO UPDATE SET updated_at = now()
     RETURNING stream_id, version`,
    [ids],
  );
  const versions = new Map(locked.rows.map((r) => [r.stream_id, r.version]));
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

  const columns = {
    id: [] as string[],
    stream: [] as string[],
    version: [] as number[],
    type: [] as string[],
    data: [] as string[],
    metadata: [] as string[],
    key: [] as (string | null)[],
    occurredAt: [] as (string | null)[],
  };
  const finalVersions: [string, number][] = [];
  for (const append of appends) {
    const fresh = append.events.filter((e) => !e.idempotencyKey || !stored.has(e.idempotencyKey));
    if (fresh.length === 0) continue;
    const current = versions.get(append.streamId) ?? 0;
    checkExpectedVersion(append.streamId, append.expectedVersion ?? "any", current);
    fresh.forEach((event, i) => {
      columns.id.push(event.id ?? randomUUID());
      columns.stream.push(append.streamId);
      columns.version.push(current + i + 1);
      columns.type.push(event.type);
      columns.data.push(JSON.stringify(event.data ?? null));
      columns.metadata.push(JSON.stringify(event.metadata ?? {}));
      columns.key.push(event.idempotencyKey ?? null);
      columns.occurredAt.push(event.occurredAt?.toISOString() ?? null);
    });
    finalVersions.push([append.streamId, current + fresh.length]);
  }
  if (columns.id.length === 0) return 0;
  await tx.query(
    `INSERT INTO events (id, stream_id, stream_version, type, data, metadata, idempotency_key, occurred_at)
     SELECT id, stream_id, version, type, data, metadata, key, coalesce(occurred_at, statement_timestamp())
       FROM unnest($1::uuid[], $2::text[], $3::bigint[], $4::text[], $5::jsonb[], $6::jsonb[], $7::text[], $8::timestamptz[])
            AS e(id, stream_id, version, type, data, metadata, key, occurred_at)`,
    [
      columns.id,
      columns.stream,
      columns.version,
      columns.type,
      columns.data,
      columns.metadata,
      columns.key,
      columns.occurredAt,
    ],
  );
  await tx.query(
    `UPDATE streams SET version = v.version
       FROM unnest($1::text[], $2::bigint[]) AS v(stream_id, version)
      WHERE streams.stream_id = v.stream_id`,
    [finalVersions.map(([id]) => id), finalVersions.map(([, v]) => v)],
  );
  await tx.query("SELECT pg_notify($1, '')", [EVENTS_CHANNEL]);
  eventsAppended.inc(columns.id.length);
  return columns.id.length;
}
