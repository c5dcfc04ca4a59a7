import t from "tap";
import { createPool, DatabaseBusyError, trySessionLock } from "../../src/db/index.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * Session locks are held on one connection beside the pool: many of them at once, with the
 * pool's every connection still free for the work under them. Two pools stand for two
 * processes.
 */
t.test(
  "many session locks take none of the pool's connections, and exclude other processes and this one",
  async (t) => {
    const db = await testDatabase(t);
    const here = createPool(db.url, 1, { connectionTimeoutMs: 2000 });
    const there = createPool(db.url, 1, { connectionTimeoutMs: 2000 });
    t.teardown(() => Promise.all([here.end(), there.end()]));

    const deprecations: string[] = [];
    const onWarning = (warning: Error) => {
      if (warning.name === "DeprecationWarning") deprecations.push(warning.message);
    };
    process.on("warning", onWarning);
    t.teardown(() => process.off("warning", onWarning));
    const locks = await Promise.all(
      Array.from({ length: 20 }, (_, n) => trySessionLock(here, `key ${n}`)),
    );
    t.ok(
      locks.every((lock) => lock !== undefined),
      "twenty locks at once, with a pool of one",
    );
    t.same(
      deprecations,
      [],
      "taken at once without pg queueing statements on the shared connection (deprecated in pg 8)",
    );
    const served = await here.query<{ ok: number }>("SELECT 1 AS ok");
    t.same(served.rows, [{ ok: 1 }], "and the pool's one connection still serves");
    const holders = await db.pool.query<{ count: number }>(
      `SELECT count(DISTINCT l.pid)::int AS count FROM pg_locks AS l
         JOIN pg_stat_activity AS a USING (pid)
        WHERE l.locktype = 'advisory' AND a.datname = current_database()`,
    );
    t.equal(holders.rows[0]!.count, 1, "all of them on one connection");

    t.equal(await trySessionLock(here, "key 3"), undefined, "this process holds key 3 already");
    t.equal(await trySessionLock(there, "key 3"), undefined, "another process is refused key 3");

    const waited = trySessionLock(there, "key 3", { waitMs: 30_000 });
    await locks[3]!.release();
    await locks[3]!.release();
    const taken = await waited;
    t.ok(taken, "a wait for the lock ends when its holder lets it go");
    t.equal(await trySessionLock(here, "key 3"), undefined, "which now holds it");
    await taken!.release();
    const back = await trySessionLock(here, "key 3");
    t.ok(back, "and this process takes it again once it is free");
    await back!.release();
  },
);

t.test("ending the pool lets its locks go", async (t) => {
  const db = await testDatabase(t);
  const here = createPool(db.url, 1);
  const there = createPool(db.url, 1);
  t.teardown(() => there.end());
  t.ok(await trySessionLock(here, "held"), "taken");
  await here.end();
  const taken = await eventually(() => trySessionLock(there, "held"), {
    what: "the lock to be free",
  });
  await taken.release();
});

t.test("a lock connection that breaks is replaced, and its locks are free again", async (t) => {
  const db = await testDatabase(t);
  const here = createPool(db.url, 1);
  const there = createPool(db.url, 1);
  t.teardown(() => Promise.all([here.end(), there.end()]));
  const lock = await trySessionLock(here, "broken");
  t.ok(lock, "taken");
  await db.pool.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE application_name = 'annal-locks' AND datname = current_database()`,
  );
  const taken = await eventually(() => trySessionLock(there, "broken"), {
    what: "the lock to be free once its connection ended",
  });
  await lock!.release();
  await taken.release();
  const again = await eventually(() => trySessionLock(here, "broken"), {
    what: "this process to take it again on a new connection",
  });
  await again.release();
});

t.test("a wait for a pooled connection ends in ANNAL_DATABASE_BUSY", async (t) => {
  const db = await testDatabase(t);
  const pool = createPool(db.url, 1, { connectionTimeoutMs: 200 });
  t.teardown(() => pool.end());
  const held = await pool.connect();
  t.teardown(() => held.release());
  const error = await pool.query("SELECT 1").catch((e: unknown) => e);
  t.type(error, DatabaseBusyError, "pool.query");
  t.match(error, { code: "ANNAL_DATABASE_BUSY", status: 503, headers: { "retry-after": "1" } });
  t.type(await pool.connect().catch((e: unknown) => e), DatabaseBusyError, "pool.connect");
});
