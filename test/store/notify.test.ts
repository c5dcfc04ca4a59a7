import pg from "pg";
import t from "tap";
import { withTransaction } from "../../src/db/index.ts";
import {
  EVENTS_CHANNEL,
  EventStore,
  appendInTransaction,
  appendToStreams,
  eventsNotifier,
} from "../../src/store/index.ts";
import { eventually } from "../support/eventually.ts";
import { armPausePoint } from "../support/pause-points.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * A tailer in another session: LISTENs to the events channel and keeps what arrives. PostgreSQL
 * delivers notifications in the order their transactions committed, so once a `sentinel` sent
 * after some commits has arrived, every notification those commits sent has arrived too.
 */
async function tailer(t: { teardown(fn: () => unknown): void }, url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  t.teardown(() => client.end());
  const payloads: string[] = [];
  client.on("notification", (message) => payloads.push(message.payload ?? ""));
  await client.query(`LISTEN ${EVENTS_CHANNEL}`);
  let sentinels = 0;
  /** An append's announcement: its notifier's token, or nothing from one inside its statement. */
  const announcement = (payload: string) => !payload.startsWith("sentinel ");
  return {
    /** How many append announcements arrived, counted once everything committed so far did. */
    async announced(): Promise<number> {
      const sentinel = `sentinel ${++sentinels}`;
      await client.query("SELECT pg_notify($1, $2)", [EVENTS_CHANNEL, sentinel]);
      await eventually(() => payloads.includes(sentinel), { what: sentinel });
      return payloads.filter(announcement).length;
    },
    /** Waits until `n` append announcements have arrived. */
    async reach(n: number, what: string) {
      await eventually(() => payloads.filter(announcement).length >= n, { what });
    },
  };
}

t.test("a tailer in another session is told of each append once it commits", async (t) => {
  const { pool, url } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const listener = await tailer(t, url);
  await store.appendToStream("a", [{ type: "A", data: {} }]);
  await listener.reach(1, "the append on the pool is announced");
  await withTransaction(pool, (tx) =>
    store.appendToStream("a", [{ type: "A", data: {} }], { tx, keysSerialised: true }),
  );
  await listener.reach(2, "the append in withTransaction is announced after its commit");
  await withTransaction(pool, (tx) =>
    appendToStreams(tx, [{ streamId: "b", events: [{ type: "B", data: {} }] }]),
  );
  await listener.reach(3, "the bulk append is announced after its commit");
  await t.rejects(
    withTransaction(pool, async (tx) => {
      await store.appendToStream("a", [{ type: "A", data: {} }], { tx });
      throw new Error("changed my mind");
    }),
  );
  await withTransaction(pool, async (tx) => {
    await store.appendToStream("a", [{ type: "A", data: {} }], { tx });
    // A failed statement aborts the transaction: its COMMIT is a rollback.
    await tx.query("SELECT 1/0").catch(() => {});
  });
  await eventsNotifier(pool).idle();
  t.equal(await listener.announced(), 3, "a transaction rolled back announces nothing");
});

t.test("appends do not notify in their own transactions; the notifier coalesces", async (t) => {
  const { pool, url } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const listener = await tailer(t, url);
  // The first announcement is held in flight while twenty more appends commit, eight at once.
  const held = armPausePoint(t, "store.notify.beforeSend");
  await store.appendToStream("s-0", [{ type: "A", data: {} }]);
  await held.reached();
  await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      i % 2 === 0
        ? store.appendToStream(`s-${i + 1}`, [{ type: "A", data: { i } }])
        : withTransaction(pool, (tx) =>
            store.appendToStream(`s-${i + 1}`, [{ type: "A", data: { i } }], { tx }),
          ),
    ),
  );
  t.equal(await listener.announced(), 0, "no append's commit notified by itself");
  held.release();
  await listener.reach(2, "the held announcement and one for the twenty after it");
  t.equal(await listener.announced(), 2, "twenty-one appends, two notifications");
  t.equal(eventsNotifier(pool).sent, 2);
});

t.test(
  "the notifier's notifications carry its token, so that its process knows its own",
  async (t) => {
    const { pool, url } = await testDatabase(t);
    const store = await EventStore.open(pool);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    t.teardown(() => client.end());
    const payloads: string[] = [];
    client.on("notification", (message) => payloads.push(message.payload ?? ""));
    await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    await store.appendToStream("s", [{ type: "A", data: {} }]);
    await eventually(() => payloads.length > 0, { what: "the announcement" });
    t.same(payloads, [eventsNotifier(pool).token]);
  },
);

t.test("an append in a transaction its caller began notifies inside it", async (t) => {
  const { pool, url } = await testDatabase(t);
  const listener = await tailer(t, url);
  const client = await pool.connect();
  t.teardown(() => client.release());
  await client.query("BEGIN");
  await appendInTransaction(client, "a", [{ type: "A", data: {} }], "any");
  await client.query("COMMIT");
  await listener.reach(1, "the append in a transaction begun by hand is announced");
  t.equal(eventsNotifier(pool).sent, 0, "by its own commit, not the notifier");
});
