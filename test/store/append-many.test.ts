import t from "tap";
import { withTransaction } from "../../src/db/index.ts";
import { EventStore, appendToStreams, readLastEvent } from "../../src/store/index.ts";
import { testDatabase } from "../support/postgres.ts";

t.test("appendToStreams appends to many streams at once, continuing their versions", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  await store.appendToStream("b", [{ type: "A", data: { n: 0 } }]);
  const stored = await withTransaction(pool, (tx) =>
    appendToStreams(tx, [
      {
        streamId: "a",
        events: [
          { type: "A", data: { n: 1 } },
          { type: "A", data: { n: 2 } },
        ],
      },
      { streamId: "b", events: [{ type: "A", data: { n: 3 } }], expectedVersion: 1 },
    ]),
  );
  t.equal(stored, 3);
  t.same(
    (await store.readStream("a")).map((e) => e.streamVersion),
    [1, 2],
  );
  t.same((await readLastEvent(pool, "b"))?.data, { n: 3 });
  t.equal((await readLastEvent(pool, "b"))?.streamVersion, 2);
  t.equal(await readLastEvent(pool, "none"), undefined);
});

t.test("appendToStreams checks versions and skips stored idempotency keys", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  await store.appendToStream("a", [{ type: "A", data: {}, idempotencyKey: "k1" }]);
  await t.rejects(
    withTransaction(pool, (tx) =>
      appendToStreams(tx, [
        { streamId: "b", events: [{ type: "A", data: {} }] },
        { streamId: "a", events: [{ type: "A", data: {} }], expectedVersion: "no_stream" },
      ]),
    ),
    { code: "ANNAL_WRONG_EXPECTED_VERSION" },
  );
  t.equal((await store.readStream("b")).length, 0, "the refused batch stored nothing");
  const stored = await withTransaction(pool, (tx) =>
    appendToStreams(tx, [
      { streamId: "a", events: [{ type: "A", data: {}, idempotencyKey: "k1" }] },
      { streamId: "c", events: [{ type: "A", data: {}, idempotencyKey: "k2" }] },
    ]),
  );
  t.equal(stored, 1);
  t.equal((await store.readStream("a")).length, 1);
});
