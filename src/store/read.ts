import type { Queryable } from "../db/index.ts";
import { EVENT_COLUMNS, toRecordedEvent, type EventRow } from "./rows.ts";
import { START, type LogPosition, type RecordedEvent } from "./types.ts";

/** The events of one stream in version order, from `fromVersion` (1 = the first). */
export async function readStream(
  db: Queryable,
  streamId: string,
  options: { fromVersion?: number; toVersion?: number; limit?: number } = {},
): Promise<RecordedEvent[]> {
  const result = await db.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events
      WHERE stream_id = $1 AND stream_version >= $2 AND stream_version <= $3
      ORDER BY stream_version LIMIT $4`,
    [
      streamId,
      options.fromVersion ?? 1,
      options.toVersion ?? Number.MAX_SAFE_INTEGER,
      options.limit ?? null,
    ],
  );
  return result.rows.map((row) => toRecordedEvent(row));
}

/**
 * The safe bound of the global order: the oldest transaction that is in flight in this
 * statement's snapshot and may be writing to this database, or the snapshot's xmax when there
 * is none. Everything below it is final. `pg_snapshot_xmin` alone would be correct too, but
 * it counts every transaction on the whole server, so one long transaction in another
 * database would stall every reader here; an in-flight xid is skipped only when
 * `pg_stat_activity` shows it belongs to a session of another database (an xid it does not
 * show, because that transaction has just ended or is prepared, is kept: that only lowers
 * the bound).
 */
export const SAFE_BOUND = `(SELECT coalesce(
    (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
      WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity AS a
                         WHERE a.backend_xid = x::xid AND a.datname <> current_database())),
    pg_snapshot_xmax(pg_current_snapshot())))`;

/**
 * Up to `limit` events after `after`, in global order: by (transaction id, position), and
 * never at or past the oldest transaction still in flight (`SAFE_BOUND`). Positions are drawn when a row is
 * inserted but become visible when its transaction commits, so a later reader could find an
 * event with a lower position than one it already passed; no transaction below the oldest one
 * in flight can still commit, so everything below that bound is final and can be read in
 * order exactly once.
 */
export async function readAll(
  db: Queryable,
  after: LogPosition = START,
  limit = 1000,
): Promise<RecordedEvent[]> {
  const result = await db.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events
      WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
        AND transaction_id < ${SAFE_BOUND}
      ORDER BY events.transaction_id, events.position
      LIMIT $3`,
    [after.transactionId, after.position, limit],
  );
  return result.rows.map((row) => toRecordedEvent(row));
}

/** The position of the last event a reader could read now (or `START` for an empty log). */
export async function readHead(db: Queryable): Promise<LogPosition> {
  const result = await db.query<{ transaction_id: string; position: number }>(
    `SELECT transaction_id::text AS transaction_id, position FROM events
      WHERE transaction_id < ${SAFE_BOUND}
      ORDER BY events.transaction_id DESC, events.position DESC LIMIT 1`,
  );
  const row = result.rows[0];
  return row ? { transactionId: row.transaction_id, position: row.position } : START;
}

/** How many readable events lie after `after` (for progress bars). */
export async function countAfter(db: Queryable, after: LogPosition): Promise<number> {
  const result = await db.query<{ count: number }>(
    `SELECT count(*)::bigint AS count FROM events
      WHERE (transaction_id, position) > ($1::xid8, $2::bigint)
        AND transaction_id < ${SAFE_BOUND}`,
    [after.transactionId, after.position],
  );
  return result.rows[0]?.count ?? 0;
}

/** Row-wise comparison of two log positions, as the database orders them. */
export function comparePositions(a: LogPosition, b: LogPosition): number {
  const byTransaction = BigInt(a.transactionId) - BigInt(b.transactionId);
  if (byTransaction !== 0n) return byTransaction < 0n ? -1 : 1;
  return a.position - b.position;
}

/** The last event of a stream, or undefined for a stream with none. */
export async function readLastEvent(
  db: Queryable,
  streamId: string,
): Promise<RecordedEvent | undefined> {
  const result = await db.query<EventRow>(
    `SELECT ${EVENT_COLUMNS} FROM events WHERE stream_id = $1 ORDER BY stream_version DESC LIMIT 1`,
    [streamId],
  );
  const row = result.rows[0];
  return row && toRecordedEvent(row);
}
