import type { Queryable } from "../db/index.ts";
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
 *
 * A strict comparison is written as the inclusive one against the next (or previous)
 * position, which selects the same rows (positions are integers). PostgreSQL estimates a
 * row-wise comparison from its first column alone: with a cursor inside a transaction that
 * holds most of the log (a first start's import), `transaction_id > T` was guessed to match no
 * row, and the planner sorted every event after the cursor to hand out one page;
 * `transaction_id >= T` is guessed right, and the page is read from the index
 * (test/store/log-order-plans.test.ts).
 */
export function logPositionCompare(
  table: string,
  op: "<" | "<=" | ">" | ">=",
  at: LogPosition,
  params: unknown[],
): string {
  const [inclusive, position] =
    op === ">" ? [">=", at.position + 1] : op === "<" ? ["<=", at.position - 1] : [op, at.position];
  params.push(at.transactionId, position);
  const n = params.length;
  return `(${table}.transaction_id, ${table}.position) ${inclusive} ($${n - 1}::xid8, $${n}::bigint)`;
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
 * The advisory lock class that marks a log reader's transaction (`markLogReader`): a
 * two-key advisory lock `(LOG_READER_LOCK, xid)` held by the transaction whose xid it names.
 */
export const LOG_READER_LOCK = 0x616e6e6c; // "annl", 1634627180: also in annal_log_safe_bound()

/**
 * The safe bound of the global order: the oldest transaction that is in flight in this
 * statement's snapshot and may append to this database's log, or the snapshot's xmax when
 * there is none. Everything below it is final.
 *
 * `pg_snapshot_xmin` alone would be correct too, but it counts every transaction on the
 * whole server, and most of them never append. Three kinds are skipped:
 * - a transaction of a session in another database (`pg_stat_activity`): one long
 *   transaction there would otherwise stall every reader here;
 * - an autovacuum worker's (`pg_stat_activity.backend_type`): an autoanalyze takes an xid to
 *   write a table's statistics, and never appends;
 * - a log reader's transaction, marked by `markLogReader`: a projection applying a batch
 *   holds an xid for as long as the batch takes (it writes its tables), and every other
 *   reader, including the projections that wait for fresh changes, would otherwise stop
 *   behind it. Such a transaction cannot append (the `events` table refuses it), so no event
 *   can ever appear below it.
 *
 * Every skip matches the xid itself, never a backend that may have moved on to its next
 * transaction: the mark is a lock keyed by the xid, so it exists only while that very
 * transaction does. An xid whose session `pg_stat_activity` does not show (it has just ended,
 * or is prepared) is kept, which only lowers the bound.
 *
 * The query is the function `annal_log_safe_bound()` (migrations/10_log-safe-bound.sql, and
 * 11_log-safe-bound-autovacuum.sql), whose plan each session keeps; it runs in the calling
 * statement's snapshot. As a scalar subquery here it is evaluated once per statement, not
 * once per row.
 */
const SAFE_BOUND = "(SELECT annal_log_safe_bound())";

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

/** The statement that marks a log reader's transaction (`markLogReader`). */
const MARK_LOG_READER = `SELECT set_config('annal.log_reader', 'on', true),
         pg_advisory_xact_lock_shared(${LOG_READER_LOCK},
           (pg_current_xact_id()::xid::text::bigint)::bit(32)::int4)`;

/**
 * Marks `tx`, an open transaction that reads the log and writes only elsewhere (a
 * projection's batch), as a log reader: the safe bound no longer waits for it. From here to
 * its end the transaction may not append (`events` refuses the insert: its statement
 * trigger checks `annal.log_reader`), which is what makes skipping it safe. Gives the
 * transaction its xid now, so call it only when the transaction is going to write anyway.
 * Not to be undone by a savepoint: mark a transaction at its top level.
 */
export async function markLogReader(tx: Queryable): Promise<void> {
  await tx.query(MARK_LOG_READER);
}

/**
 * Opens a transaction on `client` and marks it as a log reader (`markLogReader`), in one
 * round trip: for a loop of short transactions that are going to write (a replay's batches).
 */
export async function beginLogReader(client: Queryable): Promise<void> {
  await client.query(`BEGIN; ${MARK_LOG_READER}`);
}

/**
 * `(a.transaction_id, a.position) <op> (b.transaction_id, b.position)`: two rows' places in
 * the log compared, as `logPositionCompare` compares a row's with a bound one.
 */
export function logPositionsCompare(a: string, op: "<" | "<=" | ">" | ">=", b: string): string {
  return `(${a}.transaction_id, ${a}.position) ${op} (${b}.transaction_id, ${b}.position)`;
}
