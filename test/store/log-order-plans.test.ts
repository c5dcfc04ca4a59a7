import t from "tap";
import {
  EventStore,
  logOrder,
  logPositionColumns,
  logPositionCompare,
  readAll,
  readHead,
  START,
  type LogPosition,
} from "../../src/store/index.ts";
import { testDatabase } from "../support/postgres.ts";
import {
  busiestSteps,
  explainAnalyzed,
  notingPool,
  type NotedStatement,
} from "../support/plans.ts";

/**
 * A first start's import appends every entry's snapshot in one transaction, so after it most
 * of the log shares one transaction id. PostgreSQL estimates a row-wise comparison from its
 * first column alone: `(transaction_id, position) > (T, P)` was guessed as `transaction_id > T`,
 * no row at all, and the planner sorted every event after the cursor to hand out the first
 * page. The chain of a million-entry first start chained 1,000 events every 80 seconds that way
 * (each batch sorted, and digested, the half million events after it). A cursor inside that
 * transaction must read its page by the log's index and stop with it, in both directions.
 */
const IMPORTED = 6_000;
const PAGE = 100;

const { pool } = await testDatabase(t);
const store = await EventStore.open(pool);
await store.appendToStream(
  "import",
  Array.from({ length: IMPORTED }, (_, i) => ({ type: "Snapshot", data: { i } })),
);
for (let i = 0; i < 5; i++) await store.appendToStream(`later-${i}`, [{ type: "Tick", data: {} }]);
await pool.query("VACUUM ANALYZE events");

const middle: LogPosition = (await readAll(pool, START, IMPORTED / 2)).at(-1)!;
const head = await readHead(pool);
t.not(middle.transactionId, head.transactionId, "the import is one transaction, the head another");

t.test(
  "a page forward from inside the import reads the page, not the rest of the log",
  async (t) => {
    const statements: NotedStatement[] = [];
    const page = await readAll(notingPool(pool, statements), middle, PAGE);
    t.equal(page.length, PAGE);
    t.equal(page[0]!.position, middle.position + 1, "the page starts right after the cursor");
    const steps = busiestSteps(await explainAnalyzed(pool, statements.at(-1)!));
    t.equal(steps.sorted, 0, "nothing is sorted");
    t.ok(steps.scanned <= PAGE + 1, `an index scan stops with the page (${steps.scanned} rows)`);
  },
);

t.test(
  "a page backward from inside the import reads the page, not the log before it",
  async (t) => {
    const params: unknown[] = [];
    const before = logPositionCompare("e", "<", middle, params);
    params.push(PAGE);
    const statement = {
      sql: `SELECT ${logPositionColumns("e")} FROM events AS e WHERE ${before}
      ORDER BY ${logOrder("e", "backward")} LIMIT $${params.length}`,
      params,
    };
    const page = await pool.query<{ log_position: string }>(statement.sql, statement.params);
    t.same(
      page.rows.map((row) => Number(row.log_position)),
      Array.from({ length: PAGE }, (_, i) => middle.position - 1 - i),
      "the page is the events just before the cursor, newest first",
    );
    const steps = busiestSteps(await explainAnalyzed(pool, statement));
    t.equal(steps.sorted, 0, "nothing is sorted");
    t.ok(steps.scanned <= PAGE + 1, `an index scan stops with the page (${steps.scanned} rows)`);
  },
);
