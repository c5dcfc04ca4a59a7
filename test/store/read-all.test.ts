import t from "tap";
import {
  EventStore,
  logOrder,
  logPositionColumns,
  logPositionCompare,
  logPositionOf,
  readAll,
  START,
  type LogPosition,
  type LogPositionRow,
} from "../../src/store/index.ts";
import { testDatabase } from "../support/postgres.ts";

t.test("readAll pages through the log in order with cursors", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  for (let i = 0; i < 5; i++)
    await store.appendToStream(`s-${i % 2}`, [{ type: "A", data: { i } }]);
  const first = await store.readAll({ limit: 2 });
  const second = await store.readAll({ after: first.cursor, limit: 2 });
  const third = await store.readAll({ after: second.cursor, limit: 2 });
  const rest = await store.readAll({ after: third.cursor, limit: 2 });
  t.same(
    [...first.events, ...second.events, ...third.events].map((e) => (e.data as { i: number }).i),
    [0, 1, 2, 3, 4],
  );
  t.equal(rest.events.length, 0);
  t.equal(rest.cursor, third.cursor, "an empty page keeps the cursor");
});

t.test("a cursor from another database is refused, a tampered one too", async (t) => {
  const a = await testDatabase(t);
  const b = await testDatabase(t);
  const storeA = await EventStore.open(a.pool);
  const storeB = await EventStore.open(b.pool);
  await storeA.appendToStream("s", [{ type: "A", data: {} }]);
  const page = await storeA.readAll();
  await t.rejects(storeB.readAll({ after: page.cursor }), { code: "ANNAL_CURSOR_FOREIGN" });
  await t.rejects(storeA.readAll({ after: page.cursor.slice(0, -2) + "zz" }), {
    code: "ANNAL_CURSOR_INVALID",
  });
  await t.rejects(storeA.readAll({ after: "not a cursor!" }), { code: "ANNAL_CURSOR_INVALID" });
  await t.rejects(storeA.readAll({ after: Buffer.from("x.1.2").toString("base64url") }), {
    code: "ANNAL_CURSOR_INVALID",
  });
});

t.test("a copy of the database (same epoch row) gets a different epoch", async (t) => {
  const a = await testDatabase(t);
  const storeA = await EventStore.open(a.pool);
  const b = await testDatabase(t);
  // Simulate a restored dump: the epoch row is copied over verbatim.
  const epochRow = await a.pool.query("SELECT epoch FROM annal_database");
  await b.pool.query("UPDATE annal_database SET epoch = $1", [epochRow.rows[0].epoch]);
  const storeB = await EventStore.open(b.pool);
  t.not(storeA.epoch, storeB.epoch);
});

/**
 * The in-flight guard, shown deterministically. Transaction A inserts first (lower xid and
 * lower position) but commits last. A reader without the guard passes B, moves its cursor
 * beyond A, and never sees A. With the guard it waits for A and reads both, in order.
 */
t.test("readers never pass a transaction that is still in flight", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const a = await pool.connect();
  const b = await pool.connect();
  t.teardown(() => {
    a.release();
    b.release();
  });
  await a.query("BEGIN");
  await store.appendToStream("a", [{ type: "A", data: {} }], { tx: a });
  await b.query("BEGIN");
  await store.appendToStream("b", [{ type: "B", data: {} }], { tx: b });
  await b.query("COMMIT");

  // readAll without its in-flight guard.
  const unguarded = async (after: LogPosition) => {
    const params: unknown[] = [];
    const rows = await pool.query<{ type: string } & LogPositionRow>(
      `SELECT e.type, ${logPositionColumns("e")} FROM events AS e
        WHERE ${logPositionCompare("e", ">", after, params)} ORDER BY ${logOrder("e")}`,
      params,
    );
    return rows.rows.map((row) => ({ type: row.type, ...logPositionOf(row) }));
  };
  const seenUnguarded = await unguarded(START);
  const guarded = await readAll(pool, START);
  t.same(
    seenUnguarded.map((r) => r.type),
    ["B"],
    "without the guard the reader sees B while A is in flight",
  );
  t.same(guarded, [], "with the guard it holds back B, which follows the in-flight A");

  await a.query("COMMIT");
  const last = seenUnguarded.at(-1)!;
  t.same(
    (await unguarded(last)).map((r) => r.type),
    [],
    "the unguarded reader's cursor is already past A: A is lost to it",
  );
  t.same(
    (await readAll(pool, START)).map((e) => e.type),
    ["A", "B"],
    "the guarded reader reads A then B",
  );
});

/**
 * `head` is what a caller waits for to see everything stored so far (read-your-writes, tests
 * waiting for a projection). A transaction in flight with a lower id (a projector's batch,
 * another writer) must not hold it back before events already committed: the waiter would
 * return before the projection has read its own write (the flake in "two projectors on one
 * database never apply an event twice").
 */
t.test("head is the last committed event, even behind a transaction in flight", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const inFlight = await pool.connect();
  t.teardown(() => inFlight.release());
  await inFlight.query("BEGIN");
  await inFlight.query("SELECT pg_current_xact_id()");
  const { events } = await store.appendToStream("s", [{ type: "A", data: {} }]);
  t.same(await store.head(), {
    transactionId: events[0]!.transactionId,
    position: events[0]!.position,
  });
  await inFlight.query("ROLLBACK");
});
