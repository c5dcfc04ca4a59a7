import t from "tap";
import { startJobs } from "../../src/jobs/index.ts";
import { readStatus } from "../../src/operations/index.ts";
import { testDatabase } from "../support/postgres.ts";

const quiet = { error() {}, warn() {} };

t.test("status counts each queue's jobs waiting, running and waiting to retry", async (t) => {
  const { pool } = await testDatabase(t);
  t.same((await readStatus(pool, { projections: [] })).queues, [], "before pg-boss's schema: none");
  const jobs = await startJobs({ pool, log: quiet, supervise: false, schedule: false });
  t.teardown(() => jobs.stop());
  await jobs.ensureQueue("status-test", { retryLimit: 2, retryDelay: 60 });
  await jobs.boss.send("status-test", { n: 1 });
  await jobs.boss.send("status-test", { n: 2 });
  await jobs.boss.send("status-test", { n: 3 });
  t.same((await readStatus(pool, { projections: [] })).queues, [
    { name: "status-test", queued: 3, active: 0, retrying: 0 },
  ]);
  const [running, failing] = await jobs.boss.fetch("status-test", { batchSize: 2 });
  await jobs.boss.fail("status-test", failing!.id, new Error("try again later"));
  const status = await readStatus(pool, { projections: [] });
  t.same(status.queues, [{ name: "status-test", queued: 1, active: 1, retrying: 1 }]);
  t.ok(running);
  t.equal(status.failedWork, 0);
  t.equal(status.access, null, "no Access Configuration activated");
  t.same(status.capture, { holder: null, status: null });
});
