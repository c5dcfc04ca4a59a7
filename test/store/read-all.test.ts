import t from "tap";
import {
  appendToStreams,
  EventStore,
  logOrder,
  logPositionColumns,
  logPositionCompare,
  logPositionOf,
  markLogReader,
  beginLogReader,
  readAll,
  START,
  type LogPosition,
  type LogPositionRow,
} from "../../src/store/index.ts";
import type { PoolClient } from "../../src/db/index.ts";
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

/** The two ways of opening a log reader's transaction. */
const readerBegins: [string, (tx: PoolClient) => Promise<void>][] = [
  [
    "BEGIN, then markLogReader",
    async (tx) => {
      await tx.query("BEGIN");
      await markLogReader(tx);
    },
  ],
  ["beginLogReader, in one round trip", beginLogReader],
];

/**
 * A projection applying a batch holds an xid for as long as the batch takes. Unmarked, it
 * holds back every reader of the log, other projections included (capture lag grew with the
 * directory because of it); marked as a log reader, it does not, and it cannot append.
 */
for (const [how, begin] of readerBegins) {
  t.test(
    `a log reader's transaction in flight (${how}) does not hold back other readers`,
    async (t) => {
      const { pool } = await testDatabase(t);
      const store = await EventStore.open(pool);
      await pool.query("CREATE TABLE scratch (n int)");
      const reader = await pool.connect();
      const plain = await pool.connect();
      t.teardown(() => {
        reader.release();
        plain.release();
      });

      // A marked transaction with an xid (it writes its own table) is in flight...
      await begin(reader);
      await reader.query("INSERT INTO scratch VALUES (1)");
      const { events } = await store.appendToStream("s", [{ type: "A", data: {} }]);
      t.same(
        (await readAll(pool, START)).map((e) => e.id),
        events.map((e) => e.id),
        "an event committed after it is readable at once",
      );

      // ...an unmarked one that writes the same way is waited for.
      await plain.query("BEGIN");
      await plain.query("INSERT INTO scratch VALUES (2)");
      const later = await store.appendToStream("s", [{ type: "B", data: {} }]);
      t.same(
        (await readAll(pool, events[0]!)).map((e) => e.id),
        [],
        "an event committed after an unmarked transaction began is held back",
      );
      await plain.query("COMMIT");
      t.same(
        (await readAll(pool, events[0]!)).map((e) => e.id),
        later.events.map((e) => e.id),
        "and read once that transaction ends",
      );
      await reader.query("COMMIT");
    },
  );
}

t.test(
  "a transaction marked as a log reader cannot append, in one or many rows or in bulk",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    const appends: [string, (tx: PoolClient) => Promise<unknown>][] = [
      ["1 event", (tx) => store.appendToStream("s1", [{ type: "A", data: {} }], { tx })],
      [
        "3 events",
        (tx) =>
          store.appendToStream(
            "s3",
            Array.from({ length: 3 }, () => ({ type: "A", data: {} })),
            { tx },
          ),
      ],
      // The bulk append inserts with COPY, which fires the statement trigger too.
      [
        "a bulk append",
        (tx) => appendToStreams(tx, [{ streamId: "bulk", events: [{ type: "A", data: {} }] }]),
      ],
    ];
    for (const [what, append] of appends) {
      for (const [how, begin] of readerBegins) {
        const tx = await pool.connect();
        try {
          await begin(tx);
          await t.rejects(
            append(tx),
            { code: "AN001", message: /log reader's transaction may not append/ },
            `${what} refused (${how})`,
          );
          await tx.query("ROLLBACK");
        } finally {
          tx.release();
        }
      }
    }
    t.same(await readAll(pool, START), [], "nothing was appended");
    // The mark ends with its transaction: the same session appends afterwards.
    const tx = await pool.connect();
    try {
      await tx.query("BEGIN");
      await markLogReader(tx);
      await tx.query("COMMIT");
      await store.appendToStream("after", [{ type: "A", data: {} }], { tx });
    } finally {
      tx.release();
    }
    t.equal((await readAll(pool, START)).length, 1, "a later transaction of that session appends");
  },
);
