import type { Queryable } from "../db/index.ts";
import {
  belowSafeBound,
  logOrder,
  logPositionColumns,
  logPositionCompare,
  logPositionOf,
  type LogPositionRow,
} from "./log-order.ts";
import { LARGE_DATA_BYTES, readJsonInChunks } from "./large-json.ts";
import { EVENT_COLUMNS, eventColumns, recordedEventAt } from "./rows.ts";
import { START, type LogPosition, type RecordedEvent } from "./types.ts";

/**
 * The select list of `readAll`, `readStream` and `readLastEvent`: `eventColumns`, but a large
 * event's data left out, and whether it was (`withLargeData` reads it apart).
 */
const COLUMNS = `${eventColumns("e", { dataUnless: `pg_column_size(e.data) > ${LARGE_DATA_BYTES}` })},
  pg_column_size(e.data) > ${LARGE_DATA_BYTES} AS large`;

/**
 * The events of `rows` (array rows of `COLUMNS`), a large event's data read apart, in chunks
 * (`readJsonInChunks`): parsed as it came, in one piece, the data of a change to a group of
 * 100,000 members held the event loop some 50 ms.
 */
async function withLargeData(db: Queryable, rows: readonly unknown[][]): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  for (const row of rows) {
    const event = recordedEventAt(row);
    events.push(
      row[EVENT_COLUMNS] === true
        ? {
            ...event,
            data: await readJsonInChunks(
              db,
              "SELECT data AS value FROM events WHERE position = $1",
              [event.position],
            ),
          }
        : event,
    );
  }
  return events;
}

/** The events of one stream in version order, from `fromVersion` (1 = the first). */
export async function readStream(
  db: Queryable,
  streamId: string,
  options: { fromVersion?: number; toVersion?: number; limit?: number } = {},
): Promise<RecordedEvent[]> {
  const result = await db.query<unknown[]>({
    text: `SELECT ${COLUMNS} FROM events AS e
      WHERE e.stream_id = $1 AND e.stream_version >= $2 AND e.stream_version <= $3
      ORDER BY e.stream_version LIMIT $4`,
    values: [
      streamId,
      options.fromVersion ?? 1,
      options.toVersion ?? Number.MAX_SAFE_INTEGER,
      options.limit ?? null,
    ],
    rowMode: "array",
  });
  return withLargeData(db, result.rows);
}

/**
 * Up to `limit` events after `after`, in global order, never at or past the oldest
 * transaction still in flight (see `belowSafeBound`): everything it returns is final, so a
 * reader that goes on from the last event it got reads every event exactly once.
 */
export async function readAll(
  db: Queryable,
  after: LogPosition = START,
  limit = 1000,
): Promise<RecordedEvent[]> {
  const params: unknown[] = [];
  const beyond = logPositionCompare("e", ">", after, params);
  params.push(limit);
  const result = await db.query<unknown[]>({
    text: `SELECT ${COLUMNS} FROM events AS e
      WHERE ${beyond} AND ${belowSafeBound("e")}
      ORDER BY ${logOrder("e")}
      LIMIT $${params.length}`,
    values: params,
    rowMode: "array",
  });
  return withLargeData(db, result.rows);
}

/**
 * The position of the last event committed so far (or `START` for an empty log): a reader
 * (a projection) that has passed it has read everything stored until now. Not held back by
 * transactions in flight: a caller waiting for its own writes to be read would otherwise
 * wait for a position before them (and a projector's own transaction is often in flight).
 */
export async function readHead(db: Queryable): Promise<LogPosition> {
  const result = await db.query<LogPositionRow>(
    `SELECT ${logPositionColumns("e")} FROM events AS e
      ORDER BY ${logOrder("e", "backward")} LIMIT 1`,
  );
  const row = result.rows[0];
  return row ? logPositionOf(row) : START;
}

/** How many readable events lie after `after` (for progress bars). */
export async function countAfter(db: Queryable, after: LogPosition): Promise<number> {
  const params: unknown[] = [];
  const result = await db.query<{ count: number }>(
    `SELECT count(*)::bigint AS count FROM events AS e
      WHERE ${logPositionCompare("e", ">", after, params)} AND ${belowSafeBound("e")}`,
    params,
  );
  return result.rows[0]?.count ?? 0;
}

/** Row-wise comparison of two log positions, as the database orders them. */
export function comparePositions(a: LogPosition, b: LogPosition): number {
  const byTransaction = BigInt(a.transactionId) - BigInt(b.transactionId);
  if (byTransaction !== 0n) return byTransaction < 0n ? -1 : 1;
  return a.position - b.position;
}

/**
 * The last event of a stream, or undefined for a stream with none; a large event's data read
 * apart, in chunks, as `readStream` reads it.
 */
export async function readLastEvent(
  db: Queryable,
  streamId: string,
): Promise<RecordedEvent | undefined> {
  const result = await db.query<unknown[]>({
    text: `SELECT ${COLUMNS} FROM events AS e
      WHERE e.stream_id = $1 ORDER BY e.stream_version DESC LIMIT 1`,
    values: [streamId],
    rowMode: "array",
  });
  return (await withLargeData(db, result.rows))[0];
}
