import t from "tap";
import pg from "pg";
import { LogicalReplicationService, PgoutputPlugin, type Pgoutput } from "pg-logical-replication";
import { startAnnal } from "../../src/app/index.ts";
import { parseConfig } from "../../src/config/index.ts";
import { createPool } from "../../src/db/index.ts";
import { EventStore, ensurePublication, type RecordedEvent } from "../../src/store/index.ts";
import { capturedLogger } from "../http/support.ts";
import { eventually } from "../support/eventually.ts";
import { privatePostgres, testDatabase } from "../support/postgres.ts";
import {
  acknowledgeThrough,
  slotConfirmed,
  startConsumer,
  withSlot,
} from "../support/replication.ts";

// Logical decoding needs `wal_level = logical`, a server setting: this file's server is its own.
const server = await privatePostgres({ settings: { wal_level: "logical" } });

async function logOrdered(store: EventStore): Promise<RecordedEvent[]> {
  const all: RecordedEvent[] = [];
  for (let after: string | undefined; ;) {
    const page = await store.readAll({ after, limit: 100 });
    if (page.events.length === 0) return all;
    all.push(...page.events);
    after = page.cursor;
  }
}

function expectedOf(events: readonly RecordedEvent[]) {
  return events.map((e) => ({
    relation: "events",
    id: e.id,
    transactionId: e.transactionId,
    position: String(e.position),
    streamId: e.streamId,
    data: e.data,
  }));
}

async function appendSome(store: EventStore, from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    // Some appends carry several events (one transaction, positions in a row).
    const events = Array.from({ length: 1 + (i % 3) }, (_, k) => ({
      type: "Replicated",
      data: { i, k, text: `event ${i}.${k}` },
    }));
    await store.appendToStream(`stream-${i % 4}`, events);
  }
}

t.test("ensurePublication creates the publication once and repairs one made by hand", async (t) => {
  const { pool } = await testDatabase(t, { server });
  t.equal(await ensurePublication(pool, "annal_events"), "created");
  t.equal(await ensurePublication(pool, "annal_events"), "unchanged", "idempotent");
  const published = await pool.query<{ via_root: boolean; tables: string[] }>(
    `SELECT p.pubviaroot AS via_root,
            array(SELECT tablename::text FROM pg_publication_tables AS x WHERE x.pubname = p.pubname) AS tables
       FROM pg_publication AS p WHERE p.pubname = 'annal_events'`,
  );
  t.same(published.rows, [{ via_root: true, tables: ["events"] }]);

  await pool.query("CREATE PUBLICATION by_hand");
  t.equal(await ensurePublication(pool, "by_hand"), "updated");
  t.equal(await ensurePublication(pool, "by_hand"), "unchanged");

  const starts = await Promise.all([1, 2, 3].map(() => ensurePublication(pool, "at_once")));
  t.same(starts.toSorted(), ["created", "unchanged", "unchanged"], "concurrent starts agree");
});

t.test("a table an operator added to the publication (a heartbeat table) is kept", async (t) => {
  const { pool } = await testDatabase(t, { server });
  t.equal(await ensurePublication(pool, "annal_events"), "created");
  // As docs/publication.md has it for Debezium's heartbeat.
  await pool.query(`CREATE SCHEMA debezium;
    CREATE TABLE debezium.heartbeat (id int PRIMARY KEY, beat timestamptz NOT NULL);
    ALTER PUBLICATION annal_events ADD TABLE debezium.heartbeat`);
  t.equal(await ensurePublication(pool, "annal_events"), "unchanged", "the next start");
  const published = await pool.query<{ name: string }>(
    `SELECT schemaname || '.' || tablename AS name FROM pg_publication_tables
      WHERE pubname = 'annal_events' ORDER BY 1`,
  );
  t.same(
    published.rows.map((r) => r.name),
    ["debezium.heartbeat", "public.events"],
  );
});

t.test("annal start creates the publication [events] names", async (t) => {
  const { url, pool } = await testDatabase(t, { server });
  const config = parseConfig('[events]\npublication = "annal_feed"\n', {
    path: "test.toml",
    env: { DATABASE_URL: url },
  });
  const { log, lines } = capturedLogger();
  const annal = await startAnnal({ config, only: "projector", log });
  t.teardown(() => annal.stop());
  const published = await pool.query(
    "SELECT tablename FROM pg_publication_tables WHERE pubname = 'annal_feed'",
  );
  t.same(published.rows, [{ tablename: "events" }]);
  t.match(
    lines.find((line) => line.publication === "annal_feed"),
    { outcome: "created" },
  );
});

t.test("a user that may not create the publication gets ANNAL_PUBLICATION_FAILED", async (t) => {
  const { url, pool, name } = await testDatabase(t, { server });
  const role = `annal_limited_${name.slice(-6)}`;
  await pool.query(`CREATE ROLE ${role} LOGIN PASSWORD 'limited'`);
  await pool.query(`GRANT ALL ON ALL TABLES IN SCHEMA public TO ${role}`);
  const limitedUrl = new URL(url);
  limitedUrl.username = role;
  limitedUrl.password = "limited";
  const limited = createPool(limitedUrl.toString(), 1);
  try {
    await t.rejects(ensurePublication(limited, "annal_feed"), {
      code: "ANNAL_PUBLICATION_FAILED",
      hint: /CREATE PUBLICATION annal_feed FOR TABLE events/,
    });
  } finally {
    // A role is the cluster's: dropped here, before the database that holds its grants.
    await limited.end();
    await pool.query(`DROP OWNED BY ${role}; DROP ROLE ${role}`);
  }
});

t.test(
  "a logical-replication client reads every event once, in log order, with its data, across its restart",
  async (t) => {
    const db = await testDatabase(t, { server });
    const store = await EventStore.open(db.pool);
    await ensurePublication(db.pool, "annal_events");
    const slot = "annal_events_test";
    await withSlot(db.pool, slot, async () => {
      const first = startConsumer(db.url, slot, "annal_events");
      await appendSome(store, 0, 30);
      const before = await logOrdered(store);
      await eventually(() => first.kept.length === before.length, {
        what: `the first consumer has the ${before.length} events appended so far`,
      });
      t.same(first.kept, expectedOf(before), "each event once, in log order, with its data");
      const confirmed = first.confirmed()!;
      await eventually(async () => await slotConfirmed(db.pool, slot, confirmed), {
        what: "the server holds the consumer's confirmed LSN",
      });
      await first.stop();

      // Appended while no client reads: kept by the slot, from the confirmed LSN on.
      await appendSome(store, 30, 20);
      const second = startConsumer(db.url, slot, "annal_events");
      await appendSome(store, 50, 10);
      const all = await logOrdered(store);
      await eventually(() => first.kept.length + second.kept.length === all.length, {
        what: `both consumers together have the ${all.length} events`,
        timeout: 30_000,
      });
      await second.stop();
      t.same([...first.kept, ...second.kept], expectedOf(all), "nothing missing or repeated");
      t.same([...first.errors, ...second.errors], []);
    });
  },
);

t.test(
  "under concurrent writers the stream is in commit order; each row carries its log position",
  async (t) => {
    const db = await testDatabase(t, { server });
    const store = await EventStore.open(db.pool);
    await ensurePublication(db.pool, "annal_events");
    const slot = "annal_events_commit_order";
    await withSlot(db.pool, slot, async () => {
      const consumer = startConsumer(db.url, slot, "annal_events");

      // The earlier transaction (lower transaction id) commits after the later one.
      const early = new pg.Client({ connectionString: db.url });
      await early.connect();
      await early.query("BEGIN");
      await store.appendToStream("early", [{ type: "Replicated", data: { n: 1 } }], { tx: early });
      await store.appendToStream("late", [{ type: "Replicated", data: { n: 2 } }]);
      await early.query("COMMIT");
      await early.end();

      const all = await logOrdered(store);
      t.same(
        all.map((e) => e.streamId),
        ["early", "late"],
        "the log's order is the transactions' order",
      );
      // The walsender decodes once both commits are flushed; on a loaded machine that took
      // more than the default 15 s once.
      await eventually(() => consumer.kept.length === 2, {
        what: "both events replicated",
        timeout: 60_000,
      });
      await consumer.stop();
      t.same(
        consumer.kept.map((e) => e.streamId),
        ["late", "early"],
        "replication delivers in commit order",
      );
      const byLogOrder = consumer.kept.toSorted((a, b) =>
        BigInt(a.transactionId) === BigInt(b.transactionId)
          ? Number(a.position) - Number(b.position)
          : BigInt(a.transactionId) < BigInt(b.transactionId)
            ? -1
            : 1,
      );
      t.same(byLogOrder, expectedOf(all), "sorted by (transaction_id, position): the log's order");
    });
  },
);

t.test(
  "a transaction whose commit record follows an acknowledged commit directly is sent after a restart",
  async (t) => {
    const db = await testDatabase(t, { server });
    const store = await EventStore.open(db.pool);
    await ensurePublication(db.pool, "annal_events");
    const slot = "annal_events_back_to_back";
    await withSlot(db.pool, slot, async () => {
      const commits: { streams: string[]; start: string; end: string }[] = [];
      let streams: string[] = [];
      const service = new LogicalReplicationService(
        { connectionString: db.url },
        { acknowledge: { auto: false, timeoutSeconds: 0 } },
      );
      service.on("data", (_lsn: string, message: Pgoutput.Message) => {
        if (message.tag === "insert") streams.push(String(message.new.stream_id));
        if (message.tag === "commit") {
          commits.push({ streams, start: message.commitLsn!, end: message.commitEndLsn! });
          streams = [];
        }
      });
      const errors: Error[] = [];
      service.on("error", (error: Error) => errors.push(error));
      const plugin = new PgoutputPlugin({ protoVersion: 1, publicationNames: ["annal_events"] });
      service.subscribe(plugin, slot).catch((error: Error) => errors.push(error));

      // Two appends commit at once until their commit records lie back to back: the second
      // one's starts where the first one's ends.
      let pair: [(typeof commits)[number], (typeof commits)[number]] | undefined;
      for (let attempt = 0; attempt < 20 && !pair; attempt++) {
        const clients = [new pg.Client(db.url), new pg.Client(db.url)];
        for (const [n, client] of clients.entries()) {
          await client.connect();
          await client.query("BEGIN");
          await store.appendToStream(
            `pair-${attempt}-${n}`,
            [{ type: "Replicated", data: { n } }],
            {
              tx: client,
            },
          );
        }
        await Promise.all(clients.map((client) => client.query("COMMIT")));
        await Promise.all(clients.map((client) => client.end()));
        const mine = await eventually(
          () => {
            const found = commits.filter((c) => c.streams[0]?.startsWith(`pair-${attempt}-`));
            return found.length === 2 ? found : undefined;
          },
          { what: `both appends of attempt ${attempt} replicated`, timeout: 60_000 },
        );
        if (mine[0]!.end === mine[1]!.start) pair = [mine[0]!, mine[1]!];
      }
      if (!pair) throw new Error("no two commits landed back to back in 20 attempts");
      const [first, second] = pair;

      // The client kept the first and acknowledged it, and stops before it keeps the second
      // (as it would if it crashed there).
      await acknowledgeThrough(service, first.end);
      await eventually(async () => await slotConfirmed(db.pool, slot, first.end), {
        what: "the server holds the acknowledgement",
      });
      await service.destroy();

      const again = startConsumer(db.url, slot, "annal_events");
      await eventually(() => again.kept.length > 0, {
        what: "the restarted client receives the unacknowledged transaction",
        timeout: 30_000,
      });
      await again.stop();
      t.same(
        again.kept.map((e) => e.streamId),
        second.streams,
        "the second transaction, and nothing acknowledged before it",
      );
      t.same([...errors, ...again.errors], []);
    });
  },
);
