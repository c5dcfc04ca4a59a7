import { randomUUID } from "node:crypto";
import fc from "fast-check";
import t from "tap";
import type { Socket } from "node:net";
import { createPool, withTransaction } from "../../src/db/index.ts";
import {
  EventStore,
  readAll,
  readJsonInChunks,
  readLastEvent,
  readStream,
  START,
} from "../../src/store/index.ts";
import { longestJsonDuring } from "../support/loop-holds.ts";
import { testDatabase } from "../support/postgres.ts";

/** Less than the event's text: a piece of this size is a chunk, not the whole. */
const ONE_PIECE = 1_000_000;

/** A change's data with two states of 40,000 members: 3 MB of JSON, 1.6 MB stored. */
function largeChange() {
  const members = Array.from({ length: 40_000 }, () => randomUUID());
  return {
    entryUUID: randomUUID(),
    before: { dn: "cn=all", attributes: { member: members }, operational: {} },
    after: { dn: "cn=all", attributes: { member: members.slice(1) }, operational: {} },
    patch: [{ op: "remove", path: "/member/0" }],
    note: 'Grüße 😀 "q"\n',
  };
}

t.test("a large event is appended and read without its JSON made or parsed whole", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const data = largeChange();
  t.ok(JSON.stringify(data).length > 3 * ONE_PIECE, "the event's text is large");

  // Its own statement; then inside a transaction (the path capture takes).
  const alone = await longestJsonDuring(() =>
    store.appendToStream("big", [{ type: "EntryModified", data }]),
  );
  const inTransaction = await longestJsonDuring(() =>
    withTransaction(pool, (tx) =>
      store.appendToStream("big", [{ type: "EntryModified", data, metadata: { n: 2 } }], { tx }),
    ),
  );
  for (const [what, { result, made, parsed }] of [
    ["alone", alone],
    ["in a transaction", inTransaction],
  ] as const) {
    t.equal(result.events[0]!.data, data, `${what}: its data is the caller's, not read back`);
    t.ok(made < ONE_PIECE, `${what}: made in pieces of at most ${made} characters`);
    t.ok(parsed < ONE_PIECE, `${what}: nothing of its size parsed (${parsed})`);
  }

  // Read back in chunks, the same value, by the stream and by the log.
  const stream = await longestJsonDuring(() => readStream(pool, "big"));
  const log = await longestJsonDuring(() => readAll(pool, START, 10));
  for (const [what, { result, parsed }] of [
    ["readStream", stream],
    ["readAll", log],
  ] as const) {
    t.equal(result.length, 2);
    t.same(
      result.map((event) => event.data),
      [data, data],
      `${what}: the data as it was appended`,
    );
    t.ok(parsed < ONE_PIECE, `${what}: parsed in chunks of at most ${parsed} characters`);
  }
  t.same(log.result[1]!.metadata, { n: 2 });
  const last = await longestJsonDuring(() => readLastEvent(pool, "big"));
  t.same(last.result?.data, data, "readLastEvent: the data as it was appended");
  t.ok(last.parsed < ONE_PIECE, `readLastEvent: parsed in chunks of at most ${last.parsed}`);
});

t.test(
  "a large event's data goes to PostgreSQL a chunk at a time, not as one message",
  async (t) => {
    const { url } = await testDatabase(t);
    const pool = createPool(url, 2);
    t.teardown(() => pool.end());
    // What each connection writes to its socket, watched as it connects: with the data as the
    // statement's parameter, its 3 MB of JSON went in one message.
    let largest = 0;
    pool.on("connect", (client) => {
      const socket = (client as unknown as { connection: { stream: Socket } }).connection.stream;
      const write = socket.write.bind(socket) as (chunk: Uint8Array | string) => boolean;
      socket.write = ((chunk: Uint8Array | string, ...rest: unknown[]) => {
        largest = Math.max(largest, chunk.length);
        return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
      }) as typeof socket.write;
    });
    const store = await EventStore.open(pool);
    const data = largeChange();
    await store.appendToStream("big", [{ type: "EntryModified", data }]);
    await withTransaction(pool, (tx) =>
      store.appendToStream(
        "big",
        [
          { type: "EntryModified", data },
          { type: "Small", data: 1 },
        ],
        {
          tx,
        },
      ),
    );
    t.ok(largest > 0 && largest < ONE_PIECE, `the longest write was ${largest} bytes`);
    const stored = await readStream(pool, "big");
    t.same(
      stored.map((event) => event.data),
      [data, data, 1],
      "the data as it was appended, the staged and the small",
    );
    const left = await pool.query("SELECT to_regclass('pg_temp.annal_staged_data') AS staged");
    t.equal(left.rows[0]!.staged, null, "nothing staged is left after the transaction");
  },
);

t.test("a value read in chunks is the value stored, its keys in jsonb's order", async (t) => {
  const { pool } = await testDatabase(t);
  const read = async (text: string) => ({
    whole: (await pool.query<{ value: unknown }>("SELECT $1::jsonb AS value", [text])).rows[0]!
      .value,
    chunked: await readJsonInChunks(pool, "SELECT $1::jsonb AS value", [text]),
  });
  await fc.assert(
    fc.asyncProperty(fc.jsonValue(), fc.nat(25_000), async (value, length) => {
      const list = Array.from({ length }, (_, i) => [i, { i }]);
      for (const text of [
        JSON.stringify(value),
        // A large array within a short one (the patch of a group's add), and both kinds.
        JSON.stringify([value, { op: "add", value: list }]),
        JSON.stringify({
          value,
          list: Array.from({ length }, (_, i) => [i, { i }]),
          value2: value,
        }),
      ]) {
        const { whole, chunked } = await read(text);
        if (JSON.stringify(chunked) !== JSON.stringify(whole)) {
          throw new Error(`chunked ${JSON.stringify(chunked)} for ${JSON.stringify(whole)}`);
        }
      }
    }),
    { numRuns: 30 },
  );
  t.pass("30 values agree");
});
