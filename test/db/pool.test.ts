import t from "tap";
import {
  createPool,
  pipelinedPool,
  settleAll,
  withPipelinedTransaction,
} from "../../src/db/index.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * A client the pool has handed out loses its connection when the server ends it (57P01 when
 * PostgreSQL stops, or the database is dropped): that must not end the process with an
 * unhandled `error` event. Without a listener on the client, this file dies right here.
 */
t.test("a checked-out client whose connection the server ends does not crash", async (t) => {
  const db = await testDatabase(t);
  const pool = createPool(db.url, 2);
  t.teardown(() => pool.end());
  const held = await pool.connect();
  const pid = (await held.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
  const ended = new Promise<void>((resolve) => held.once("end", () => resolve()));
  await db.pool.query("SELECT pg_terminate_backend($1)", [pid]);
  await ended;
  await t.rejects(held.query("SELECT 1"), "its own query fails, so its user learns of it");
  held.release(true);
  const fresh = await pool.query<{ ok: number }>("SELECT 1 AS ok");
  t.same(fresh.rows, [{ ok: 1 }], "the pool goes on with a new connection");
});

t.test("a pipelined transaction commits what it sent together, in the order sent", async (t) => {
  const db = await testDatabase(t, { migrated: false });
  const pool = pipelinedPool(db.pool, 2);
  t.teardown(() => pool.end());
  await db.pool.query("CREATE TABLE notes (n int PRIMARY KEY, after int)");
  const xacts = await withPipelinedTransaction(pool, async (tx) => {
    const [first, , last] = await settleAll([
      tx.query<{ x: string }>(
        "INSERT INTO notes VALUES (1, NULL) RETURNING pg_current_xact_id() AS x",
      ),
      tx.query("INSERT INTO notes SELECT 2, max(n) FROM notes"),
      tx.query<{ x: string }>("SELECT pg_current_xact_id() AS x"),
    ]);
    return [first.rows[0]!.x, last.rows[0]!.x];
  });
  t.equal(xacts[0], xacts[1], "one transaction");
  const rows = await db.pool.query("SELECT n, after FROM notes ORDER BY n");
  t.same(rows.rows, [
    { n: 1, after: null },
    { n: 2, after: 1 },
  ]);
});

t.test("a pipelined transaction with a failed statement stores nothing", async (t) => {
  const db = await testDatabase(t, { migrated: false });
  const pool = pipelinedPool(db.pool, 1);
  t.teardown(() => pool.end());
  await db.pool.query("CREATE TABLE notes (n int PRIMARY KEY)");
  await t.rejects(
    withPipelinedTransaction(pool, (tx) =>
      settleAll([
        tx.query("INSERT INTO notes VALUES (1)"),
        tx.query("INSERT INTO notes VALUES (1)"),
        tx.query("INSERT INTO notes VALUES (2)"),
      ]),
    ),
    { code: "23505" },
  );
  // A failure the work did not observe: COMMIT is answered with ROLLBACK, which must fail too.
  await t.rejects(
    withPipelinedTransaction(pool, async (tx) => {
      tx.query("INSERT INTO notes VALUES (3)").catch(() => {});
      tx.query("SELECT 1/0").catch(() => {});
    }),
    /rolled back/,
  );
  const rows = await db.pool.query("SELECT count(*)::int AS n FROM notes");
  t.equal(rows.rows[0].n, 0);
  const again = await withPipelinedTransaction(pool, (tx) =>
    tx.query("INSERT INTO notes VALUES (4)"),
  );
  t.equal(again.rowCount, 1, "the connection is usable afterwards");
});
