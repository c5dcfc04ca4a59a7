import t from "tap";
import { readCaptureStatus, startCaptureWorker } from "../../src/capture/index.ts";
import { startJobs } from "../../src/jobs/index.ts";
import { captureFixture, quietLog } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";
import { feed } from "../support/history.ts";

t.test("the scheduled capture job records changes without being asked", async (t) => {
  const f = await captureFixture(t);
  // The first start imports what exists; only what changes after it is a change.
  await f.sync();
  const jobs = await startJobs({ pool: f.db.pool, log: quietLog });
  t.teardown(() => jobs.stop());
  const worker = await startCaptureWorker(jobs, f.context, {
    source: "accesslog",
    interval: 200,
    reconcileInterval: 600_000,
    snapshotInterval: 0,
  });
  t.teardown(() => worker.stop());
  await f.directory.add("uid=auto,ou=people,dc=example,dc=org", {
    objectClass: ["inetOrgPerson"],
    uid: "auto",
    cn: "Auto",
    sn: "Matic",
  });
  const changes = await eventually(
    async () => {
      const rows = await feed(f.db.pool);
      return rows.length > 0 ? rows : undefined;
    },
    { what: "the change is captured" },
  );
  t.same(
    changes.map((c) => [c.change_type, c.dn]),
    [["add", "uid=auto,ou=people,dc=example,dc=org"]],
  );
  const now = await worker.captureNow();
  t.equal(now.recorded, 0, "a pass on demand finds nothing more");

  // Each pass notes how it went, for /readyz: a success, then, with the directory gone,
  // failures in a row with the last error.
  t.match(await readCaptureStatus(f.db.pool, "accesslog"), {
    consecutiveFailures: 0,
    lastSuccessAt: Date,
  });
  await f.slapd.stop();
  const failing = await eventually(
    async () => {
      const status = await readCaptureStatus(f.db.pool, "accesslog");
      return status.consecutiveFailures >= 2 ? status : undefined;
    },
    { what: "failed passes are noted" },
  );
  t.match(failing.lastError, { code: /^ANNAL_/, message: String, at: Date });
});

t.test("a worker that stops hands its turn to another process's worker", async (t) => {
  const f = await captureFixture(t);
  await f.sync();
  const schedule = {
    source: "accesslog" as const,
    interval: 50,
    reconcileInterval: 600_000,
    snapshotInterval: 0,
  };
  // Two processes: each its own pg-boss and its own worker on one database.
  const first = await startJobs({ pool: f.db.pool, log: quietLog });
  t.teardown(() => first.stop());
  const firstWorker = await startCaptureWorker(first, f.context, schedule);
  const second = await startJobs({ pool: f.db.pool, log: quietLog });
  t.teardown(() => second.stop());
  const secondWorker = await startCaptureWorker(second, f.context, schedule);
  t.teardown(() => secondWorker.stop());

  const add = async (uid: string) => {
    await f.directory.add(`uid=${uid},ou=people,dc=example,dc=org`, {
      objectClass: ["inetOrgPerson"],
      uid,
      cn: uid,
      sn: uid,
    });
    await eventually(
      async () => (await feed(f.db.pool)).some((c) => c.dn.startsWith(`uid=${uid},`)) || undefined,
      { what: `${uid} is captured` },
    );
  };
  await add("before");
  await firstWorker.stop();
  await first.stop();
  await add("after");
  t.pass("captured after the first worker stopped");
});
