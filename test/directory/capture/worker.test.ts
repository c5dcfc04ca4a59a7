import t from "tap";
import { startCaptureWorker } from "../../../src/directory/capture/index.ts";
import { startJobs } from "../../../src/jobs/index.ts";
import { captureFixture, quietLog } from "../../support/capture.ts";
import { feed } from "../../support/history.ts";

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
  const deadline = Date.now() + 15_000;
  let changes = await feed(f.db.pool);
  while (changes.length === 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    changes = await feed(f.db.pool);
  }
  t.same(
    changes.map((c) => [c.change_type, c.dn]),
    [["add", "uid=auto,ou=people,dc=example,dc=org"]],
  );
  const now = await worker.captureNow();
  t.equal(now.recorded, 0, "a pass on demand finds nothing more");
});
