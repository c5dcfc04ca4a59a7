import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { MIGRATIONS_DIR, migrateDatabase, withTransaction, type Pool } from "../../src/db/index.ts";
import {
  appendInTransaction,
  appendMark,
  ensureEventPartitions,
  EventStore,
  readHead,
  readLastEvent,
  type RecordedEvent,
} from "../../src/store/index.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";

const WIDTH = 10_000_000;

async function partitionsOf(pool: Pool): Promise<string[]> {
  const result = await pool.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits AS i JOIN pg_class AS c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'events'::regclass ORDER BY c.relname`,
  );
  return result.rows.map((row) => row.name).sort((a, b) => bound(a) - bound(b));
}

const bound = (name: string) => Number(name.replace("events_from_", ""));

/** Moves the position sequence so that the next event lands at `next`. */
async function nextPositionAt(pool: Pool, next: number): Promise<void> {
  await pool.query(
    "SELECT setval(pg_get_serial_sequence('events', 'position'), $1::bigint, false)",
    [next],
  );
}

async function everything(store: EventStore): Promise<RecordedEvent[]> {
  const all: RecordedEvent[] = [];
  for (let after: string | undefined; ;) {
    const page = await store.readAll({ after, limit: 3 });
    if (page.events.length === 0) return all;
    all.push(...page.events);
    after = page.cursor;
  }
}

t.test("the event table is partitioned by position, with partitions ready ahead", async (t) => {
  const { pool } = await testDatabase(t);
  const kind = await pool.query<{ kind: string }>(
    "SELECT relkind::text AS kind FROM pg_class WHERE oid = 'events'::regclass",
  );
  t.equal(kind.rows[0]?.kind, "p");
  t.same(await partitionsOf(pool), [
    "events_from_0",
    "events_from_10000000",
    "events_from_20000000",
  ]);
  t.equal(await ensureEventPartitions(pool), 3 * WIDTH, "idempotent");
  t.same((await partitionsOf(pool)).length, 3);
});

t.test(
  "an append that enters the last ready partition has the next ones made, beside it",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    await store.appendToStream("s", [{ type: "A", data: {} }]);
    t.equal(store.partitions.extending, undefined, "far from the last partition: nothing to do");

    await nextPositionAt(pool, 2 * WIDTH + 5);
    const { events } = await store.appendToStream("s", [{ type: "A", data: {} }]);
    t.equal(events[0]!.position, 2 * WIDTH + 5);
    await eventually(async () => (await partitionsOf(pool)).length === 5, {
      what: "two more partitions",
    });
    t.same((await partitionsOf(pool)).slice(3), ["events_from_30000000", "events_from_40000000"]);
    await store.partitions.extending;

    // Appends go on past the partitions there were before.
    await nextPositionAt(pool, 4 * WIDTH + 1);
    const later = await store.appendToStream("s", [{ type: "A", data: { last: true } }]);
    t.equal(later.events[0]!.position, 4 * WIDTH + 1);
    t.equal(later.version, 3);
  },
);

t.test("every reader and constraint works across partitions", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const appended: RecordedEvent[] = [];
  for (const [i, at] of [1, WIDTH - 1, WIDTH, 2 * WIDTH + 7].entries()) {
    await nextPositionAt(pool, at);
    const { events } = await store.appendToStream(
      `s-${i % 2}`,
      [{ type: "A", data: { i }, idempotencyKey: `key-${i}` }],
      { expectedVersion: Math.floor(i / 2) },
    );
    appended.push(...events);
  }
  t.same(
    appended.map((e) => e.position),
    [1, WIDTH - 1, WIDTH, 2 * WIDTH + 7],
    "the events span three partitions",
  );
  t.same(
    (await everything(store)).map((e) => e.id),
    appended.map((e) => e.id),
    "the feed pages through them in log order",
  );
  t.same(
    (await store.readStream("s-0")).map((e) => e.position),
    [1, WIDTH],
    "a stream's events come from every partition",
  );
  t.equal((await readLastEvent(pool, "s-1"))?.position, 2 * WIDTH + 7);
  t.equal((await readHead(pool)).position, 2 * WIDTH + 7);
  t.same(await appendMark(pool), { position: 2 * WIDTH + 7 });

  const again = await store.appendToStream("s-0", [
    { type: "A", data: { i: 0 }, idempotencyKey: "key-0" },
  ]);
  t.equal(again.appended, 0, "a key stored in an older partition is known");
  t.equal(again.events[0]!.id, appended[0]!.id);
  await t.rejects(
    pool.query(
      `INSERT INTO events (id, stream_id, stream_version, type, data, idempotency_key, occurred_at)
       VALUES (gen_random_uuid(), 'other', 1, 'A', '{}', 'key-1', now())`,
    ),
    { code: "23505", constraint: "event_idempotency_keys_pkey" },
    "a key is unique across partitions",
  );
  await t.rejects(store.appendToStream("s-1", [{ type: "A", data: {} }], { expectedVersion: 1 }), {
    code: "ANNAL_WRONG_EXPECTED_VERSION",
  });
  await t.rejects(
    pool.query(
      `INSERT INTO events (id, stream_id, stream_version, type, data, occurred_at)
       VALUES (gen_random_uuid(), 's-1', 2, 'A', '{}', now())`,
    ),
    { code: "23505" },
    "a stream's version is unique within the newest partition",
  );
});

t.test("the migration moves an existing log into partitions, keys and order kept", async (t) => {
  const { pool } = await testDatabase(t, { migrated: false });
  const before = mkdtempSync(path.join(tmpdir(), "annal-migrations-"));
  t.teardown(() => rmSync(before, { recursive: true, force: true }));
  // Every migration before the partitioning one (ids are consecutive: later ones wait too).
  const files = readdirSync(MIGRATIONS_DIR);
  const partitioning = parseInt(
    files.find((file) => file.includes("events-partitioned"))!,
    10,
  );
  for (const file of files) {
    if (parseInt(file, 10) < partitioning)
      cpSync(path.join(MIGRATIONS_DIR, file), path.join(before, file));
  }
  await migrateDatabase(pool, before);
  for (let i = 0; i < 7; i++) {
    const event = { type: "A", data: { i }, ...(i % 2 ? { idempotencyKey: `key-${i}` } : {}) };
    await withTransaction(pool, (tx) => appendInTransaction(tx, `s-${i % 3}`, [event], "any"));
  }
  const old = await pool.query<{ id: string; position: string; transaction_id: string }>(
    "SELECT id, position::text, transaction_id::text FROM events ORDER BY transaction_id, position",
  );

  await migrateDatabase(pool);
  const store = await EventStore.open(pool);
  t.same(
    (await everything(store)).map((e) => ({
      id: e.id,
      position: String(e.position),
      transaction_id: e.transactionId,
    })),
    old.rows,
    "every event, at its position, in its transaction",
  );
  const repeat = await store.appendToStream("s-1", [
    { type: "A", data: {}, idempotencyKey: "key-1" },
  ]);
  t.equal(repeat.appended, 0, "a key stored before the migration is known");
  const next = await store.appendToStream("s-1", [{ type: "A", data: {} }]);
  t.equal(next.events[0]!.position, 8, "positions go on from the last");
});
