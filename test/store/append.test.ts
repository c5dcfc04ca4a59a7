import t from "tap";
import { EventStore, WrongExpectedVersionError } from "../../src/store/index.ts";
import { testDatabase } from "../support/postgres.ts";

t.test("append assigns consecutive stream versions and global positions", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const first = await store.appendToStream("s-1", [
    { type: "A", data: { n: 1 } },
    { type: "B", data: { n: 2 }, metadata: { actor: "alice", source: "test" } },
  ]);
  t.equal(first.version, 2);
  t.same(
    first.events.map((e) => [e.streamVersion, e.type, e.data]),
    [
      [1, "A", { n: 1 }],
      [2, "B", { n: 2 }],
    ],
  );
  t.ok(first.events[1]!.position > first.events[0]!.position);
  t.equal(first.events[1]!.metadata.actor, "alice");
  const read = await store.readStream("s-1");
  t.same(
    read.map((e) => e.id),
    first.events.map((e) => e.id),
  );
});

t.test("append rejects a stale expected version", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  await store.appendToStream("s", [{ type: "A", data: {} }], { expectedVersion: "no_stream" });
  await store.appendToStream("s", [{ type: "A", data: {} }], { expectedVersion: 1 });
  const error = await store
    .appendToStream("s", [{ type: "A", data: {} }], { expectedVersion: 1 })
    .catch((e: unknown) => e);
  t.type(error, WrongExpectedVersionError);
  t.equal((error as WrongExpectedVersionError).code, "ANNAL_WRONG_EXPECTED_VERSION");
  t.equal((error as WrongExpectedVersionError).actual, 2);
  t.equal((error as WrongExpectedVersionError).status, 409);
  await t.rejects(
    store.appendToStream("s", [{ type: "A", data: {} }], { expectedVersion: "no_stream" }),
    { code: "ANNAL_WRONG_EXPECTED_VERSION" },
  );
  await t.rejects(
    store.appendToStream("other", [{ type: "A", data: {} }], { expectedVersion: "exists" }),
    { code: "ANNAL_WRONG_EXPECTED_VERSION" },
  );
  t.equal((await store.readStream("s")).length, 2, "nothing was appended by the refused calls");
  t.equal((await store.readStream("other")).length, 0);
});

t.test("an idempotency key already stored appends nothing and returns the original", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const original = await store.appendToStream(
    "s",
    [{ type: "A", data: { v: 1 }, idempotencyKey: "source:1" }],
    { expectedVersion: "no_stream" },
  );
  // The retry states the version the first attempt saw; it is stale now, yet the repeat
  // succeeds because its outcome is already recorded.
  const repeat = await store.appendToStream(
    "s",
    [{ type: "A", data: { v: 1 }, idempotencyKey: "source:1" }],
    { expectedVersion: "no_stream" },
  );
  t.equal(repeat.appended, 0);
  t.equal(repeat.events[0]!.id, original.events[0]!.id);
  t.equal(repeat.events[0]!.position, original.events[0]!.position);

  const mixed = await store.appendToStream("s", [
    { type: "A", data: {}, idempotencyKey: "source:1" },
    { type: "A", data: {}, idempotencyKey: "source:2" },
  ]);
  t.equal(mixed.appended, 1);
  t.equal(mixed.events[0]!.id, original.events[0]!.id);
  t.equal(mixed.events[1]!.streamVersion, 2);
  t.equal((await store.readStream("s")).length, 2);
});

t.test("concurrent appends of one idempotency key store it once", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      store.appendToStream(`stream-${i % 3}`, [{ type: "A", data: {}, idempotencyKey: "k" }]),
    ),
  );
  t.equal(new Set(results.map((r) => r.events[0]!.id)).size, 1);
  const count = await pool.query("SELECT count(*)::int AS n FROM events");
  t.equal(count.rows[0].n, 1);
});

t.test("an append inside the caller's transaction rolls back with it", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const client = await pool.connect();
  await client.query("BEGIN");
  await store.appendToStream("s", [{ type: "A", data: {} }], { tx: client });
  await client.query("ROLLBACK");
  client.release();
  t.equal((await store.readStream("s")).length, 0);
});

t.test("occurredAt is kept apart from recordedAt", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const occurredAt = new Date("2020-01-02T03:04:05.678Z");
  const { events } = await store.appendToStream("s", [{ type: "A", data: {}, occurredAt }]);
  t.equal(events[0]!.occurredAt.toISOString(), occurredAt.toISOString());
  t.ok(events[0]!.recordedAt.getTime() > occurredAt.getTime());
});
