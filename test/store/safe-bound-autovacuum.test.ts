import t from "tap";
import { EventStore, markLogReader, readAll, START } from "../../src/store/index.ts";
import { eventually } from "../support/eventually.ts";
import { privatePostgres, testDatabase } from "../support/postgres.ts";

/**
 * An autovacuum worker analyzing a table of annal's database holds a transaction id while it
 * writes the table's statistics, and it can never append to the log: the log's safe bound
 * does not wait for it. Before, every reader of the log stopped behind an autoanalyze for as
 * long as it lasted (a flaky read in `log-order.test.ts` was one of them).
 *
 * Here the worker is made to hold its id for as long as the test needs: a transaction of the
 * test (a log reader's, so that the bound skips it) locks the table's rows in `pg_statistic`,
 * which the worker's ANALYZE then waits to update. The server is the file's own, so that
 * autovacuum can come by every second.
 */
t.setTimeout(120_000);

const server = await privatePostgres();
const { pool } = await testDatabase(t, { server });

t.test("an autoanalyze in flight holds back no reader of the log", async (t) => {
  await pool.query("ALTER SYSTEM SET autovacuum_naptime = '1s'");
  await pool.query("SELECT pg_reload_conf()");
  await pool.query(
    `CREATE TABLE watched (n integer)
       WITH (autovacuum_analyze_threshold = 0, autovacuum_analyze_scale_factor = 0)`,
  );
  await pool.query("INSERT INTO watched SELECT generate_series(1, 1000)");
  await pool.query("ANALYZE watched");

  const holder = await pool.connect();
  t.teardown(async () => {
    await holder.query("ROLLBACK");
    holder.release();
  });
  // Its row locks give it a transaction id too: marked as a log reader, it is skipped.
  await holder.query("BEGIN");
  await markLogReader(holder);
  await holder.query("SELECT 1 FROM pg_statistic WHERE starelid = 'watched'::regclass FOR UPDATE");
  await pool.query("INSERT INTO watched SELECT generate_series(1, 1000)");
  await eventually(
    async () =>
      (
        await pool.query(
          `SELECT 1 FROM pg_stat_activity
            WHERE backend_type = 'autovacuum worker' AND datname = current_database()
              AND backend_xid IS NOT NULL AND wait_event_type = 'Lock'`,
        )
      ).rowCount === 1,
    {
      what: "an autovacuum worker analyzing the table, with a transaction id, waits",
      timeout: 60_000,
    },
  );

  const store = await EventStore.open(pool);
  const { events } = await store.appendToStream("s", [{ type: "A", data: {} }]);
  t.same(
    (await readAll(pool, START)).map((e) => e.id),
    events.map((e) => e.id),
    "the event appended meanwhile is read at once",
  );
});
