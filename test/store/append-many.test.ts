import fc from "fast-check";
import t from "tap";
import { withTransaction } from "../../src/db/index.ts";
import {
  EventStore,
  appendMark,
  appendToStreams,
  readLastEvent,
  readStream,
} from "../../src/store/index.ts";
import { eventually } from "../support/eventually.ts";
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
  // Every event skipped: nothing to insert, and the versions still as the log has them.
  const none = await withTransaction(pool, (tx) =>
    appendToStreams(tx, [
      { streamId: "a", events: [{ type: "A", data: {}, idempotencyKey: "k1" }] },
      { streamId: "c", events: [{ type: "A", data: {}, idempotencyKey: "k2" }] },
    ]),
  );
  t.equal(none, 0);
  // A skipped event moves no version: the next append to each stream follows its last event.
  for (const streamId of ["a", "c"]) {
    const next = await store.appendToStream(streamId, [{ type: "A", data: {} }], {
      expectedVersion: 1,
    });
    t.equal(next.events[0]!.streamVersion, 2, `${streamId} goes on at version 2`);
  }
});

t.test("appendToStreams stores each event as appendToStream does", async (t) => {
  // The rows travel as one JSON document: every field must arrive as the one-stream path
  // stores it, JSON null and awkward text included.
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const occurredAt = new Date("2026-11-20T10:11:12.345Z");
  const events = (tag: string) => [
    {
      id: tag === "one" ? "0f0e0d0c-0b0a-4908-8706-050403020100" : undefined,
      type: "Awkward",
      data: {
        quote: '"',
        backslash: "\\",
        braces: "{a,b}",
        unicode: "Zoë 😀 \u2028",
        list: [1, null],
      },
      metadata: { source: "test", actor: 'o"neil' },
      occurredAt,
      idempotencyKey: `${tag}:1`,
    },
    { type: "Nothing", data: null },
    { type: "Text", data: 'a "quoted" string' },
  ];
  await store.appendToStream("one", events("one"));
  await withTransaction(pool, (tx) =>
    appendToStreams(tx, [{ streamId: "many", events: events("many") }]),
  );
  const one = await store.readStream("one");
  const many = await store.readStream("many");
  t.equal(many.length, 3);
  t.equal(many[0]!.id !== one[0]!.id, true, "a new id where none is given");
  t.equal(one[0]!.id, "0f0e0d0c-0b0a-4908-8706-050403020100", "the id given is kept");
  // New ids are UUIDv7s, time first, so new rows land at one end of the id index.
  const made = [...one.slice(1), ...many].map((event) => event.id);
  t.same(
    made.filter((id) => !/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab]/.test(id)),
    [],
    "every id made on either path is a UUIDv7",
  );
  const millis = made.map((id) => parseInt(id.replaceAll("-", "").slice(0, 12), 16));
  t.same(
    millis,
    [...millis].sort((a, b) => a - b),
    "made in time order",
  );
  t.ok(Math.abs(millis.at(-1)! - Date.now()) < 60_000, "their time is the time they were made");
  for (const [i, event] of many.entries()) {
    const same = one[i]!;
    t.same(
      [event.type, event.data, event.metadata, event.streamVersion],
      [same.type, same.data, same.metadata, same.streamVersion],
      event.type,
    );
  }
  t.equal(many[0]!.occurredAt.toISOString(), occurredAt.toISOString());
  t.equal(many[0]!.idempotencyKey, "many:1");
  t.equal(many[1]!.idempotencyKey, null);
  t.equal(
    (await pool.query("SELECT count(*)::int AS n FROM events WHERE data = 'null'::jsonb")).rows[0]
      .n,
    2,
    "null data is the JSON null, on both paths",
  );
});

t.test(
  "appendToStreams with unmovedSince leaves out the streams appended to after the mark",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    await store.appendToStream("before", [{ type: "A", data: { n: 1 } }]);
    const mark = await appendMark(pool);
    await store.appendToStream("after", [{ type: "A", data: { n: 2 } }]);
    const snapshot = (streamId: string) => ({
      streamId,
      events: [{ type: "Snapshot", data: { of: streamId } }],
    });
    const stored = await withTransaction(pool, (tx) =>
      appendToStreams(tx, [snapshot("before"), snapshot("after"), snapshot("new")], {
        unmovedSince: mark,
      }),
    );
    t.equal(stored, 2);
    t.same((await readLastEvent(pool, "before"))?.data, { of: "before" }, "unmoved: appended");
    t.same((await readLastEvent(pool, "after"))?.data, { n: 2 }, "moved: left as it was");
    t.same((await readLastEvent(pool, "new"))?.data, { of: "new" }, "a new stream is unmoved");
    // The stream left out keeps its version; the others moved by one.
    for (const [streamId, version] of [
      ["before", 2],
      ["after", 1],
      ["new", 1],
    ] as const) {
      const next = await store.appendToStream(streamId, [{ type: "A", data: {} }], {
        expectedVersion: version,
      });
      t.equal(next.events[0]!.streamVersion, version + 1, `${streamId} goes on after ${version}`);
    }
  },
);

t.test(
  "appendToStreams decides which streams moved after locking them: an append that held a " +
    "stream's lock and commits while it waits counts as a move",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    await store.appendToStream("held", [{ type: "A", data: { n: 1 } }]);
    const mark = await appendMark(pool);

    // Another writer appends to "held" after the mark, and begins "born" (a stream new to
    // both), and has not committed.
    const writer = await pool.connect();
    t.teardown(() => writer.release());
    await writer.query("BEGIN");
    await store.appendToStream("held", [{ type: "A", data: { n: 2 } }], { tx: writer });
    await store.appendToStream("born", [{ type: "A", data: { n: 3 } }], { tx: writer });

    const bulk = await pool.connect();
    t.teardown(() => bulk.release());
    const bulkPid = (await bulk.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!
      .pid;
    await bulk.query("BEGIN");
    const appending = appendToStreams(
      bulk,
      ["born", "free", "held"].map((streamId) => ({
        streamId,
        events: [{ type: "Snapshot", data: { of: streamId } }],
      })),
      { unmovedSince: mark },
    );
    await eventually(
      async () =>
        (
          await pool.query(
            "SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'",
            [bulkPid],
          )
        ).rowCount === 1,
      { what: "the bulk append waits for the stream's lock" },
    );
    await writer.query("COMMIT");
    t.equal(await appending, 1, "only the free stream is appended to");
    await bulk.query("COMMIT");
    t.same(
      (await store.readStream("held")).map((e) => e.data),
      [{ n: 1 }, { n: 2 }],
      "the held stream ends with the other writer's event",
    );
    t.same(
      (await store.readStream("born")).map((e) => e.data),
      [{ n: 3 }],
      "so does the stream it began",
    );
    t.same((await readLastEvent(pool, "free"))?.data, { of: "free" });
  },
);

t.test(
  "appendToStreams stores any text, JSON and instant exactly as appendToStream does",
  async (t) => {
    // Its events travel in COPY's binary format, encoded here (src/store/copy-events.ts): a
    // length or an offset off by one byte, a character counted as one byte, a timestamp off
    // by its epoch, would show as a value that differs from the one-statement path's.
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    // PostgreSQL's text and jsonb hold any character but NUL.
    const text = fc.string({ unit: "grapheme", maxLength: 12 }).map((s) => s.replaceAll("\0", ""));
    const json = fc
      .jsonValue({ maxDepth: 3 })
      .map((value) => JSON.parse(JSON.stringify(value).replaceAll("\\u0000", "")));
    const instant = fc.date({
      min: new Date("0001-01-01T00:00:00Z"),
      max: new Date("9999-12-31T23:59:59.999Z"),
      noInvalidDate: true,
    });
    const event = fc.record(
      {
        type: text.filter((s) => s.length > 0),
        data: json,
        metadata: fc.dictionary(text, json, { maxKeys: 3 }),
        occurredAt: instant,
        idempotencyKey: text.filter((s) => s.length > 0),
      },
      { requiredKeys: ["type", "data"] },
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(event, { minLength: 1, maxLength: 4 }), async (events) => {
        run++;
        const keyed = (tag: string) =>
          events.map((e, i) =>
            e.idempotencyKey === undefined
              ? e
              : { ...e, idempotencyKey: `${tag}:${run}:${i}:${e.idempotencyKey}` },
          );
        await store.appendToStream(`one-${run}`, keyed("one"));
        await withTransaction(pool, (tx) =>
          appendToStreams(tx, [{ streamId: `many-${run}`, events: keyed("many") }]),
        );
        const one = await store.readStream(`one-${run}`);
        const many = await store.readStream(`many-${run}`);
        const shape = (e: (typeof one)[number], tag: string) => ({
          type: e.type,
          version: e.streamVersion,
          data: e.data,
          metadata: e.metadata,
          key: e.idempotencyKey?.replace(`${tag}:`, ""),
          occurredAt: e.occurredAt.getTime() === e.recordedAt.getTime() ? "now" : e.occurredAt,
        });
        t.same(
          many.map((e) => shape(e, "many")),
          one.map((e) => shape(e, "one")),
        );
      }),
      { numRuns: 150 },
    );
  },
);

t.test(
  "appendToStreams takes both clocks from the database for events that give none",
  async (t) => {
    const { pool } = await testDatabase(t);
    const at = async () =>
      (await pool.query<{ now: Date }>("SELECT clock_timestamp() AS now")).rows[0]!.now.getTime();
    const before = await at();
    await withTransaction(pool, (tx) =>
      appendToStreams(tx, [
        { streamId: "a", events: [{ type: "A", data: {} }] },
        {
          streamId: "b",
          events: [{ type: "B", data: {}, occurredAt: new Date("2020-02-02T02:02:02Z") }],
        },
      ]),
    );
    const after = await at();
    const [a] = await readStream(pool, "a");
    const [b] = await readStream(pool, "b");
    t.equal(a!.occurredAt.getTime(), a!.recordedAt.getTime(), "occurred when recorded");
    t.ok(
      a!.recordedAt.getTime() >= before && a!.recordedAt.getTime() <= after,
      "by the database's clock",
    );
    t.equal(b!.occurredAt.toISOString(), "2020-02-02T02:02:02.000Z", "the time given is kept");
    t.equal(b!.recordedAt.getTime(), a!.recordedAt.getTime(), "one append, one moment");
  },
);

t.test("appendToStreams stores large events beside many small ones, intact", async (t) => {
  const { pool } = await testDatabase(t);
  // A group's snapshot is one event of megabytes.
  const members = (n: number, size: number) =>
    Array.from({ length: size }, (_, i) => `uid=user${n}-${i},ou=people,dc=example,dc=org`);
  const large = [1, 2, 3].map((n) => ({ type: "G", data: { member: members(n, 20_000) } }));
  const small = Array.from({ length: 600 }, (_, n) => ({ type: "S", data: { n, é: "ü😀" } }));
  const stored = await withTransaction(pool, (tx) =>
    appendToStreams(tx, [
      { streamId: "groups", events: large },
      { streamId: "small", events: small },
    ]),
  );
  t.equal(stored, 603);
  t.same(
    (await readStream(pool, "groups")).map((e) => e.data),
    large.map((e) => e.data),
  );
  t.same(
    (await readStream(pool, "small")).map((e) => e.data),
    small.map((e) => e.data),
  );
});

t.test("appendToStreams refuses data that is not JSON, stores nothing, and goes on", async (t) => {
  const { pool } = await testDatabase(t);
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  await t.rejects(
    withTransaction(pool, (tx) =>
      appendToStreams(tx, [
        { streamId: "a", events: [{ type: "A", data: { ok: true } }] },
        { streamId: "b", events: [{ type: "A", data: cyclic }] },
      ]),
    ),
    { name: "TypeError", message: /circular/ },
  );
  t.same(await readStream(pool, "a"), []);
  await withTransaction(pool, (tx) =>
    appendToStreams(tx, [{ streamId: "a", events: [{ type: "A", data: { ok: true } }] }]),
  );
  t.same(
    (await readStream(pool, "a")).map((e) => e.data),
    [{ ok: true }],
  );
});

t.test("appendToStreams refuses an event id that is not a uuid, and stores nothing", async (t) => {
  const { pool } = await testDatabase(t);
  await t.rejects(
    withTransaction(pool, (tx) =>
      appendToStreams(tx, [
        { streamId: "a", events: [{ type: "A", data: {} }] },
        {
          streamId: "b",
          events: [{ id: "0f0e0d0c-0b0a-4908-8706-05040302010g", type: "A", data: {} }],
        },
      ]),
    ),
    { name: "TypeError", message: /invalid input syntax for type uuid/ },
  );
  t.same(await readStream(pool, "a"), []);
  const braced = "{0F0E0D0C-0B0A-4908-8706-050403020100}";
  await withTransaction(pool, (tx) =>
    appendToStreams(tx, [{ streamId: "c", events: [{ id: braced, type: "A", data: {} }] }]),
  );
  t.equal(
    (await readStream(pool, "c"))[0]!.id,
    "0f0e0d0c-0b0a-4908-8706-050403020100",
    "as PostgreSQL reads it",
  );
});

t.test(
  "appendToStreams fails with PostgreSQL's own error when its COPY is refused, and the " +
    "connection goes on",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    const id = "0f0e0d0c-0b0a-4908-8706-050403020100";
    await store.appendToStream("a", [{ id, type: "A", data: {} }]);
    const client = await pool.connect();
    t.teardown(() => client.release());
    await client.query("BEGIN");
    await t.rejects(
      appendToStreams(client, [{ streamId: "b", events: [{ id, type: "A", data: {} }] }]),
      { code: "23505", constraint: "events_from_0_id_key" },
      "an id stored before: the unique violation",
    );
    await client.query("ROLLBACK");
    await client.query("BEGIN");
    t.equal(
      await appendToStreams(client, [{ streamId: "b", events: [{ type: "A", data: {} }] }]),
      1,
      "the same connection appends in its next transaction",
    );
    await client.query("COMMIT");
    t.same(
      (await readStream(pool, "b")).map((e) => e.streamVersion),
      [1],
    );
  },
);
