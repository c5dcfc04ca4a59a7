import t from "tap";
import { createPool } from "../../src/db/index.ts";
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
