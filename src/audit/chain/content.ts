import { createHash } from "node:crypto";

/** The hash before the first event's: 32 zero bytes. */
export const GENESIS = Buffer.alloc(32);

/** `YYYY-MM-DDTHH:MM:SS.ffffffZ`: a moment in UTC to the microsecond, whatever the session's TimeZone. */
function utc(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;
}

/**
 * `sha256(<content>)` of the event row `table` (an alias of `events`), as SQL: the digest of
 * its stored fields as one JSON object in PostgreSQL's jsonb text form. That form is canonical
 * for a jsonb value (keys sorted, one spacing, numbers and strings as stored), so the digest
 * depends on what is stored and nothing else: not on the session's settings, not on a
 * client's JSON parser (no number loses digits on the way, no timestamp its microseconds).
 * Computed in the database so that only 32 bytes an event travel to the chainer.
 *
 * Every stored field is in it, the event's place in the log included: changing any of them,
 * by SQL or on disk, changes the digest. Changing the expression changes every hash: it is
 * part of the chain's format, like the migration that made the table.
 */
export function contentDigest(table: string): string {
  const t = table;
  return `sha256(convert_to(jsonb_build_object(
      'position', ${t}.position, 'transaction', ${t}.transaction_id, 'id', ${t}.id,
      'stream', ${t}.stream_id, 'version', ${t}.stream_version, 'type', ${t}.type,
      'data', ${t}.data, 'metadata', ${t}.metadata, 'idempotencyKey', ${t}.idempotency_key,
      'occurredAt', ${utc(`${t}.occurred_at`)}, 'recordedAt', ${utc(`${t}.recorded_at`)}
    )::text, 'UTF8'))`;
}

/** An event's link: `sha256(previous hash || content digest)`. */
export function linkHash(previous: Buffer, digest: Buffer): Buffer {
  return createHash("sha256").update(previous).update(digest).digest();
}
