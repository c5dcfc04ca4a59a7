import type { LogPosition } from "./types.ts";

/**
 * The log's order, written once. Every reader of the event log, and of a projection that
 * keeps log positions, builds its ordering, its cursor comparisons and its position columns
 * here, and nowhere else (test/store/log-order-sql.test.ts fails on any other).
 *
 * The order is `(transaction_id, position)`: the appending transaction's xid8, then the
 * position drawn within it. Why this is written once: pg returns xid8 as text, and a query
 * that selects `transaction_id::text AS transaction_id` and then says `ORDER BY
 * transaction_id` orders by the output column, the text, so "1000" sorts before "999". That
 * shipped twice. Here the columns are always qualified with their table, which names the
 * xid8 column itself, and the text is selected under another name (`log_transaction_id`),
 * so no output column can shadow the one that orders.
 *
 * @example
 * const params: unknown[] = [];
 * const sql = `SELECT ${logPositionColumns("c")}, c.dn FROM changes AS c
 *   WHERE ${logPositionCompare("c", ">", after, params)}
 *   ORDER BY ${logOrder("c", "forward")} LIMIT 10`;
 * const positions = (await db.query(sql, params)).rows.map(logPositionOf);
 */

/** Reading forward is oldest first; backward is newest first. */
export type LogDirection = "forward" | "backward";

/** The text of a log position as a row carries it (`logPositionColumns`). */
export interface LogPositionRow {
  readonly log_transaction_id: string;
  readonly log_position: number | string;
}

/** `t.transaction_id ASC, t.position ASC` (or both DESC): the log's order over table `t`. */
export function logOrder(table: string, direction: LogDirection = "forward"): string {
  const order = direction === "forward" ? "ASC" : "DESC";
  return `${table}.transaction_id ${order}, ${table}.position ${order}`;
}

/**
 * `(t.transaction_id, t.position) <op> ($n::xid8, $m::bigint)`, binding `at` to `params`:
 * a row-wise comparison, which is what the log's order is (and what its index serves).
 */
export function logPositionCompare(
  table: string,
  op: "<" | "<=" | ">" | ">=",
  at: LogPosition,
  params: unknown[],
): string {
  params.push(at.transactionId, at.position);
  const n = params.length;
  return `(${table}.transaction_id, ${table}.position) ${op} ($${n - 1}::xid8, $${n}::bigint)`;
}

/**
 * `t.transaction_id::text AS log_transaction_id, t.position AS log_position`: a row's
 * position in the select list, under names that shadow no column (read it with
 * `logPositionOf`).
 */
export function logPositionColumns(table: string): string {
  return `${table}.transaction_id::text AS log_transaction_id, ${table}.position AS log_position`;
}

/** The log position of a row that selected `logPositionColumns`. */
export function logPositionOf(row: LogPositionRow): LogPosition {
  return { transactionId: row.log_transaction_id, position: Number(row.log_position) };
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
const SAFE_BOUND = `(SELECT coalesce(
    (SELECT min(x) FROM pg_snapshot_xip(pg_current_snapshot()) AS x
      WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity AS a
                         WHERE a.backend_xid = x::xid AND a.datname <> current_database())),
    pg_snapshot_xmax(pg_current_snapshot())))`;

/**
 * `t.transaction_id < <safe bound>`: only events whose transaction, and every one before it,
 * has ended. Positions are drawn when a row is inserted but become visible when its
 * transaction commits, so a reader could otherwise pass a position that a transaction still
 * in flight later commits below; no transaction below the oldest one in flight can still
 * commit, so everything below the bound is final and can be read in order exactly once.
 */
export function belowSafeBound(table: string): string {
  return `${table}.transaction_id < ${SAFE_BOUND}`;
}
