import t from "tap";
import { createPool, withTransaction } from "../../src/db/index.ts";
import { EventStore, WrongExpectedVersionError } from "../../src/store/index.ts";
import { appendInOneStatement } from "../../src/store/append.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * The append that is its own transaction runs as one statement. These races are what its
 * locking must survive: it checks versions against the stream's row as locked, not against its
 * snapshot, and a key another append stored after its snapshot sends it to the transaction
 * path. Each race is many appends at once on a pool of as many connections.
 */

t.test("appends to one stream at once get every version once, in order", async (t) => {
  const db = await testDatabase(t);
  const pool = createPool(db.url, 20);
  t.teardown(() => pool.end());
  const store = await EventStore.open(pool);
  const results = await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      store.appendToStream("busy", [
        { type: "A", data: { i } },
        { type: "B", data: { i } },
      ]),
    ),
  );
  const versions = results.flatMap((r) => r.events.map((e) => e.streamVersion));
  t.same(
    versions.toSorted((a, b) => a - b),
    Array.from({ length: 120 }, (_, i) => i + 1),
  );
  for (const result of results) {
    t.equal(result.events[1]!.streamVersion, result.events[0]!.streamVersion + 1, "adjacent");
    t.equal(result.version, result.events[1]!.streamVersion);
  }
  const stream = await pool.query("SELECT version FROM streams WHERE stream_id = 'busy'");
  t.equal(stream.rows[0].version, 120);
});

t.test("of appends expecting a new stream at once, exactly one succeeds", async (t) => {
  const db = await testDatabase(t);
  const pool = createPool(db.url, 20);
  t.teardown(() => pool.end());
  const store = await EventStore.open(pool);
  const outcomes = await Promise.allSettled(
    Array.from({ length: 20 }, (_, i) =>
      store.appendToStream("new", [{ type: "A", data: { i } }], { expectedVersion: "no_stream" }),
    ),
  );
  const won = outcomes.filter((o) => o.status === "fulfilled");
  t.equal(won.length, 1);
  for (const lost of outcomes.filter((o) => o.status === "rejected")) {
    t.type(lost.reason, WrongExpectedVersionError);
    t.equal((lost.reason as WrongExpectedVersionError).actual, 1);
  }
  t.equal((await store.readStream("new")).length, 1);
});

t.test(
  "appends expecting the same version at once: one wins, the others learn the version",
  async (t) => {
    const db = await testDatabase(t);
    const pool = createPool(db.url, 20);
    t.teardown(() => pool.end());
    const store = await EventStore.open(pool);
    await store.appendToStream("s", [{ type: "A", data: {} }]);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, () =>
        store.appendToStream("s", [{ type: "B", data: {} }], { expectedVersion: 1 }),
      ),
    );
    t.equal(outcomes.filter((o) => o.status === "fulfilled").length, 1);
    const reasons = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason] : []));
    t.ok(reasons.every((r) => r instanceof WrongExpectedVersionError && r.actual === 2));
  },
);

t.test("one idempotency key appended at once to many streams is stored once", async (t) => {
  const db = await testDatabase(t);
  const pool = createPool(db.url, 20);
  t.teardown(() => pool.end());
  const store = await EventStore.open(pool);
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      store.appendToStream(`stream-${i % 4}`, [
        { type: "Once", data: { i }, idempotencyKey: "the-key" },
      ]),
    ),
  );
  const ids = new Set(results.map((r) => r.events[0]!.id));
  t.equal(ids.size, 1, "every append returns the one stored event");
  t.equal(
    results.reduce((sum, r) => sum + r.appended, 0),
    1,
  );
  const stored = await pool.query(
    "SELECT count(*)::int AS n FROM events WHERE idempotency_key = 'the-key'",
  );
  t.equal(stored.rows[0].n, 1);
});

t.test("known keys and new events in one append; the expected version of a stream", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const first = await store.appendToStream("s", [{ type: "A", data: {}, idempotencyKey: "k1" }]);
  const mixed = await store.appendToStream(
    "s",
    [
      { type: "A", data: {}, idempotencyKey: "k1" },
      { type: "B", data: {}, idempotencyKey: "k2" },
      { type: "C", data: {} },
    ],
    { expectedVersion: 1 },
  );
  t.equal(mixed.appended, 2);
  t.equal(mixed.version, 3);
  t.equal(mixed.events[0]!.id, first.events[0]!.id, "the known event, as stored");
  t.same(
    mixed.events.slice(1).map((e) => [e.type, e.streamVersion]),
    [
      ["B", 2],
      ["C", 3],
    ],
  );
  // Everything known: a repeat, whatever the version now.
  const repeat = await store.appendToStream("s", [{ type: "B", data: {}, idempotencyKey: "k2" }], {
    expectedVersion: 1,
  });
  t.equal(repeat.appended, 0);
  t.equal(repeat.events[0]!.id, mixed.events[1]!.id);

  await t.rejects(
    store.appendToStream("missing", [{ type: "A", data: {} }], { expectedVersion: "exists" }),
    WrongExpectedVersionError,
  );
  await t.rejects(
    store.appendToStream("missing", [{ type: "A", data: {} }], { expectedVersion: 3 }),
    WrongExpectedVersionError,
  );
  t.equal(
    (await store.appendToStream("s", [{ type: "D", data: {} }], { expectedVersion: "exists" }))
      .version,
    4,
  );
  t.equal(
    (await store.appendToStream("s", [{ type: "E", data: {} }], { expectedVersion: 4 })).version,
    5,
  );
});

t.test(
  "what one statement cannot decide it leaves to the transaction path, having written nothing",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    await store.appendToStream("s", [{ type: "A", data: {} }]);
    const before = await pool.query("SELECT count(*)::int AS n FROM events");
    t.equal(await appendInOneStatement(pool, "s", [{ type: "B", data: {} }], 7), undefined);
    t.equal(
      await appendInOneStatement(pool, "none", [{ type: "B", data: {} }], "exists"),
      undefined,
    );
    t.equal(
      await appendInOneStatement(pool, "s", [{ type: "B", data: {} }], "no_stream"),
      undefined,
    );
    const after = await pool.query("SELECT count(*)::int AS n FROM events");
    t.equal(after.rows[0].n, before.rows[0].n);
    const streams = await pool.query("SELECT stream_id, version FROM streams ORDER BY stream_id");
    t.same(streams.rows, [{ stream_id: "s", version: 1 }], "no stream made or moved");
    const decided = await appendInOneStatement(pool, "s", [{ type: "B", data: {} }], 1);
    t.match(decided, { version: 2, appended: 1, events: [{ type: "B", streamVersion: 2 }] });
  },
);

t.test(
  "in a caller's transaction with keysSerialised: one statement, known keys kept, versions checked",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    const first = await store.appendToStream("s", [{ type: "A", data: {}, idempotencyKey: "k1" }]);
    const statements: string[] = [];
    const result = await withTransaction(pool, async (tx) => {
      const counting = {
        query: (query: string | { name?: string; text: string }, values?: unknown[]) => {
          statements.push(typeof query === "string" ? query : (query.name ?? query.text));
          return tx.query(query, values);
        },
      } as unknown as typeof tx;
      const appended = await store.appendToStream(
        "s",
        [
          { type: "A", data: {}, idempotencyKey: "k1" },
          { type: "B", data: {}, idempotencyKey: "k2" },
        ],
        { tx: counting, keysSerialised: true, expectedVersion: 1 },
      );
      t.equal(appended.appended, 1);
      t.equal(appended.version, 2);
      // An expected version that does not hold: the transaction path decides, and throws.
      await store.appendToStream("s", [{ type: "C", data: {} }], {
        tx: counting,
        keysSerialised: true,
        expectedVersion: 1,
      });
    }).catch((error: unknown) => error);
    t.type(result, WrongExpectedVersionError, "the refusal rolls the transaction back");
    t.equal(statements[0], "annal-append-in-one-statement", "the first append is one statement");
    t.equal((await store.readStream("s")).length, 1, "nothing of the rolled back transaction");

    const committed = await withTransaction(pool, (tx) =>
      store.appendToStream(
        "s",
        [
          { type: "A", data: {}, idempotencyKey: "k1" },
          { type: "B", data: {}, idempotencyKey: "k2" },
        ],
        { tx, keysSerialised: true },
      ),
    );
    t.equal(committed.appended, 1);
    t.equal(committed.events[0]!.id, first.events[0]!.id, "the known event, as stored");
    t.match(committed.events[1], { type: "B", streamVersion: 2 });
  },
);

t.test(
  "an append without keys runs the statement without keys; one with a key, the other",
  async (t) => {
    const { pool } = await testDatabase(t);
    const names: string[] = [];
    const counting = {
      query: (query: string | { name?: string; text: string }, values?: unknown[]) => {
        names.push(typeof query === "string" ? query : (query.name ?? query.text));
        return pool.query(query, values);
      },
    } as unknown as typeof pool;
    const store = await EventStore.open(counting);
    names.length = 0;
    const first = await store.appendToStream(
      "s",
      [
        { type: "A", data: { n: 1 } },
        { type: "A", data: { n: 2 }, occurredAt: new Date("2026-01-02T03:04:05Z") },
      ],
      { expectedVersion: "no_stream" },
    );
    t.same(names, ["annal-append-without-keys"]);
    t.same(
      first.events.map((e) => [e.streamVersion, e.data, e.idempotencyKey]),
      [
        [1, { n: 1 }, null],
        [2, { n: 2 }, null],
      ],
    );
    t.equal(first.events[1]!.occurredAt.toISOString(), "2026-01-02T03:04:05.000Z");
    t.equal(first.version, 2);
    t.equal(first.appended, 2);
    names.length = 0;
    const second = await store.appendToStream(
      "s",
      [
        { type: "B", data: {} },
        { type: "B", data: {}, idempotencyKey: "k" },
      ],
      { expectedVersion: 2 },
    );
    t.same(names, ["annal-append-in-one-statement"]);
    t.equal(second.version, 4);
    t.same(
      (await store.readStream("s")).map((e) => e.streamVersion),
      [1, 2, 3, 4],
    );
  },
);
