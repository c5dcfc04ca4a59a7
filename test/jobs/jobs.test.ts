import t from "tap";
import { pino } from "pino";
import { withTransaction } from "../../src/db/index.ts";
import { inTransaction, startJobs } from "../../src/jobs/index.ts";
import { testDatabase } from "../support/postgres.ts";

const silent = pino({ level: "silent" });

t.test("jobs run in annal's database, in the pgboss schema", async (t) => {
  const db = await testDatabase(t);
  const jobs = await startJobs({ pool: db.pool, log: silent });
  t.teardown(() => jobs.stop());
  await jobs.ensureQueue("greetings");
  await jobs.ensureQueue("greetings", { retryLimit: 9 }); // safe to repeat
  const done = new Promise<unknown[]>((resolve) => {
    void jobs.boss.work<{ name: string }>(
      "greetings",
      { pollingIntervalSeconds: 0.5 },
      async (batch) => resolve(batch.map((job) => job.data)),
    );
  });
  await jobs.boss.send("greetings", { name: "ada" });
  t.same(await done, [{ name: "ada" }]);
  const schema = await db.pool.query("SELECT 1 FROM pg_namespace WHERE nspname = 'pgboss'");
  t.equal(schema.rowCount, 1);
});

t.test("a job sent in a transaction commits and rolls back with it", async (t) => {
  const db = await testDatabase(t);
  const jobs = await startJobs({ connectionString: db.url, log: silent });
  t.teardown(() => jobs.stop());
  await jobs.ensureQueue("q");
  await withTransaction(db.pool, (tx) =>
    jobs.boss.send("q", { n: 1 }, { db: jobs.inTransaction(tx) }),
  );
  await t.rejects(
    withTransaction(db.pool, async (tx) => {
      await jobs.boss.send("q", { n: 2 }, { db: jobs.inTransaction(tx) });
      throw new Error("roll back");
    }),
  );
  const rows = await db.pool.query("SELECT data FROM pgboss.job WHERE name = 'q'");
  t.same(rows.rows, [{ data: { n: 1 } }]);
});

t.test("startJobs needs a pool or a connection string", async (t) => {
  await t.rejects(startJobs({ log: silent }), /needs a pool or a connectionString/);
});

t.test("the pool adapter answers multi-statement SQL as pg-boss reads it", async (t) => {
  const db = await testDatabase(t);
  const adapter = inTransaction(db.pool);
  const multi = (await adapter.executeSql("SELECT 1 AS a; SELECT 2 AS b, 3 AS c")) as unknown;
  t.same(multi, [{ rows: [{ a: 1 }] }, { rows: [{ b: 2, c: 3 }] }]);
  t.same(await adapter.executeSql("SELECT $1::int AS n", [4]), { rows: [{ n: 4 }] });
});

t.test("pg-boss's supervision and monitor run on annal's pool without an error", async (t) => {
  const db = await testDatabase(t);
  const errors: unknown[] = [];
  const log = { error: (...args: unknown[]) => errors.push(args), warn() {} };
  const jobs = await startJobs({ pool: db.pool, log });
  t.teardown(() => jobs.stop());
  await jobs.ensureQueue("q");
  await jobs.boss.send("q", { n: 1 });
  // What the supervisor runs every minute (it failed with "reading 'reduce'" before).
  await jobs.boss.supervise("q");
  await jobs.boss.supervise();
  t.same(errors, []);
});
