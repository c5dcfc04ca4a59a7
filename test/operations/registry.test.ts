import t from "tap";
import { listProcesses, registerProcess } from "../../src/operations/index.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";

const quiet = { warn() {} };

t.test(
  "a process's row is refreshed by its heartbeat, put back when pruned, and removed at stop",
  async (t) => {
    const { pool } = await testDatabase(t);
    const registered = await registerProcess({
      pool,
      parts: ["workers"],
      log: quiet,
      heartbeatMs: 50,
    });
    t.teardown(() => registered.stop());
    const [row] = await listProcesses(pool);
    t.equal(row!.id, registered.id);
    t.same(row!.parts, ["workers"]);
    t.equal(row!.pid, process.pid);
    t.equal(row!.gone, false);

    await pool.query("UPDATE annal_processes SET last_seen_at = now() - interval '1 minute'");
    t.equal((await listProcesses(pool))[0]!.gone, true, "not seen for a while: gone");
    await eventually(async () => (await listProcesses(pool))[0]?.gone === false, {
      what: "the heartbeat refreshes the row",
    });

    // Pruned by another process while this one was cut off: its next heartbeat puts it back.
    await pool.query("DELETE FROM annal_processes");
    await eventually(async () => (await listProcesses(pool)).length === 1, {
      what: "the row is back",
    });

    await registered.stop();
    t.same(await listProcesses(pool), []);
  },
);

t.test("a row gone for longer than an hour is pruned by another process's heartbeat", async (t) => {
  const { pool } = await testDatabase(t);
  await pool.query(
    `INSERT INTO annal_processes (id, parts, host, pid, version, last_seen_at)
     VALUES (gen_random_uuid(), '{api}', 'elsewhere', 1, '0', now() - interval '2 hours'),
            (gen_random_uuid(), '{api}', 'elsewhere', 2, '0', now() - interval '5 minutes')`,
  );
  const registered = await registerProcess({ pool, parts: ["api"], log: quiet, heartbeatMs: 50 });
  t.teardown(() => registered.stop());
  await eventually(async () => (await listProcesses(pool)).length === 2, {
    what: "the long-gone row is pruned",
  });
  const rows = await listProcesses(pool);
  t.same(
    rows.map((r) => [r.pid, r.gone]).sort(),
    [
      [2, true],
      [process.pid, false],
    ].sort(),
  );
});
