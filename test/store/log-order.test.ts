import t from "tap";
import { changeFeed, changesOf, type ChangeRecord } from "../../src/history/index.ts";
import { Projector, type Projection } from "../../src/projector/index.ts";
import {
  countAfter,
  markLogReader,
  readAll,
  readHead,
  START,
  type LogPosition,
  type RecordedEvent,
} from "../../src/store/index.ts";
import { PEOPLE, restHarness } from "../rest/fixtures/harness.ts";
import { eventually } from "../support/eventually.ts";
import { burnTransactionIds, privatePostgres, testDatabase } from "../support/postgres.ts";

/**
 * Every reader that orders by the log, walked one item a page in both directions over
 * changes recorded on both sides of 999 → 1000 and 9999 → 10000 transaction ids. Ordering by
 * the text of a transaction id puts "1000" before "999" and "10000" before "9995": a reader
 * that did would return changes out of order here, and a client following its cursors would
 * skip some. The cluster is the file's own, so its transaction ids are exactly where the test
 * puts them.
 */
t.setTimeout(300_000);

const server = await privatePostgres();
const database = await testDatabase(t, { server });
const harness = await restHarness(t, { database });
const { pool, history, get } = harness;

const currentXid = async () =>
  BigInt(
    (await pool.query<{ xid: string }>("SELECT pg_current_xact_id()::text AS xid")).rows[0]!.xid,
  );

// Two entries changed in turn, so one entry's changes are spread over the log.
const alice = await history.add({
  dn: `uid=alice,${PEOPLE}`,
  type: "user",
  attributes: { objectClass: ["inetOrgPerson"], uid: ["alice"], cn: ["Alice"], sn: ["L"] },
});
const bob = await history.add({
  dn: `uid=bob,${PEOPLE}`,
  type: "user",
  attributes: { objectClass: ["inetOrgPerson"], uid: ["bob"], cn: ["Bob"], sn: ["B"] },
});
let n = 0;
const changeBoth = async (times: number) => {
  for (let i = 0; i < times; i++) {
    n += 1;
    await history.modify(n % 2 === 0 ? alice : bob, { title: [`title ${n}`] });
  }
};
const crossings: bigint[] = [];
for (const power of [1_000n, 10_000n]) {
  // A fresh cluster starts a few hundred ids in; where it starts past 995 already, the
  // crossing at 1000 is left out (10000 is always crossed).
  if ((await currentXid()) >= power - 5n) continue;
  await burnTransactionIds(pool, power - 5n);
  await changeBoth(10);
  crossings.push(power);
}
await history.settled();

const events = await readAll(pool, START, 100_000);
const ids = events.map((e) => e.id);
// The log holds more than changes (the harness's token, for one).
const changes = events.filter((e) => e.type === "EntryAdded" || e.type === "EntryModified");
const changeIds = changes.map((e) => e.id);
const xids = [...new Set(events.map((e) => BigInt(e.transactionId)))];

t.test("the recorded changes sit on both sides of a power of ten", async (t) => {
  t.ok(crossings.includes(10_000n), `crossed ${crossings.join(", ")}`);
  for (const power of crossings) {
    t.ok(
      xids.some((x) => x < power) && xids.some((x) => x >= power),
      `transaction ids below and from ${power}`,
    );
  }
  const sorted = [...xids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  t.same(xids, sorted, "readAll's transaction ids ascend numerically");
});

t.test("readAll one event a page reads every event once, in log order", async (t) => {
  const walked: RecordedEvent[] = [];
  let after: LogPosition = START;
  for (;;) {
    const page = await readAll(pool, after, 1);
    if (page.length === 0) break;
    walked.push(page[0]!);
    after = page[0]!;
  }
  t.same(
    walked.map((e) => e.id),
    ids,
  );
  t.same(await readHead(pool), {
    transactionId: walked.at(-1)!.transactionId,
    position: walked.at(-1)!.position,
  });
  const middle = walked[Math.floor(walked.length / 2)]!;
  t.equal(await countAfter(pool, middle), walked.length - walked.indexOf(middle) - 1);
});

t.test("the event store's cursors page through the log once, in order", async (t) => {
  const walked: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await harness.store.readAll({ limit: 1, ...(cursor ? { after: cursor } : {}) });
    if (page.events.length === 0) break;
    walked.push(page.events[0]!.id);
    cursor = page.cursor;
  }
  t.same(walked, ids);
});

t.test("a projector applies the events in log order", async (t) => {
  const applied: string[] = [];
  const order: Projection = {
    name: "order_check",
    version: 1,
    handles: ["EntryAdded", "EntryModified"],
    tables: () => [],
    async apply(batch) {
      applied.push(...batch.map((e) => e.id));
    },
  };
  const projector = await Projector.start({
    pool,
    projections: [order],
    log: { info() {}, warn() {}, error() {} },
    pollInterval: 20,
    batchSize: 1,
  });
  t.teardown(() => projector.stop());
  await eventually(() => applied.length >= changeIds.length, { what: "the projector caught up" });
  t.same(applied, changeIds);
});

/** Walks the change feed one change a page, forward from the start and backward from the end. */
async function walkFeed(read: typeof changeFeed, filter: { entryUUID?: string }) {
  const forward: ChangeRecord[] = [];
  let after: LogPosition | undefined;
  for (;;) {
    const page = await read(pool, filter, {
      direction: "forward",
      limit: 1,
      ...(after ? { after } : {}),
    });
    forward.push(...page.changes);
    if (!page.more) break;
    after = page.changes[0]!;
  }
  const backward: ChangeRecord[] = [];
  let before: LogPosition | undefined;
  for (;;) {
    const page = await read(pool, filter, {
      direction: "backward",
      limit: 1,
      ...(before ? { before } : {}),
    });
    backward.unshift(...page.changes);
    if (!page.more) break;
    before = page.changes[0]!;
  }
  return { forward: forward.map((c) => c.eventId), backward: backward.map((c) => c.eventId) };
}

const entryEvents = (uuid: string) =>
  changes.filter((e) => (e.data as { entryUUID: string }).entryUUID === uuid).map((e) => e.id);

t.test(
  "the change feed, one change a page, both ways: every change once, in log order",
  async (t) => {
    t.same(await walkFeed(changeFeed, {}), { forward: changeIds, backward: changeIds });
  },
);

t.test("one entry's changes, one a page, both ways: every change once, in log order", async (t) => {
  const read: typeof changeFeed = (db, filter, page) => changesOf(db, filter.entryUUID!, {}, page);
  for (const uuid of [alice, bob]) {
    const expected = entryEvents(uuid);
    t.same(await walkFeed(read, { entryUUID: uuid }), { forward: expected, backward: expected });
  }
});

/** Follows a REST feed's cursors one node a page: `first=1&after=` and `last=1&before=`. */
async function walkRest(path: string) {
  const nodeIds = (body: { nodes: { changeId: string }[] }) => body.nodes.map((n) => n.changeId);
  const forward: string[] = [];
  let after = "";
  for (;;) {
    const response = await get(`${path}?first=1${after}`);
    if (response.statusCode !== 200) throw new Error(`${path}: ${response.body}`);
    const body = response.json();
    forward.push(...nodeIds(body));
    if (!body.pageInfo.hasNextPage) break;
    after = `&after=${encodeURIComponent(body.pageInfo.endCursor)}`;
  }
  const backward: string[] = [];
  let before = "";
  for (;;) {
    const body = (await get(`${path}?last=1${before}`)).json();
    backward.unshift(...nodeIds(body));
    if (!body.pageInfo.hasPreviousPage) break;
    before = `&before=${encodeURIComponent(body.pageInfo.startCursor)}`;
  }
  return { forward, backward };
}

t.test("GET /api/changes, one a page, both ways: every change once, in log order", async (t) => {
  t.same(await walkRest("/api/changes"), { forward: changeIds, backward: changeIds });
});

t.test("GET /api/entries/users/{id}/changes, one a page, both ways", async (t) => {
  for (const uuid of [alice, bob]) {
    const expected = entryEvents(uuid);
    t.same(await walkRest(`/api/entries/users/${uuid}/changes`), {
      forward: expected,
      backward: expected,
    });
  }
});

/**
 * A log reader's transaction (a projection's batch) is left out of the safe bound by its xid.
 * Here that xid has five digits and the events read past it six: the skip matches the xid by
 * number, never by its text.
 */
t.test("a log reader in flight at 99,99x holds back no event of 100,00x", async (t) => {
  await burnTransactionIds(pool, 99_997n);
  const reader = await pool.connect();
  t.teardown(() => reader.release());
  await reader.query("BEGIN");
  await markLogReader(reader);
  const readerXid = BigInt(
    (await reader.query<{ xid: string }>("SELECT pg_current_xact_id()::text AS xid")).rows[0]!.xid,
  );
  t.ok(readerXid < 100_000n, `the reader's xid ${readerXid} has five digits`);
  const before = await readHead(pool);
  await burnTransactionIds(pool, 100_000n);
  const appended: string[] = [];
  for (let i = 0; i < 3; i++) {
    const { events } = await harness.store.appendToStream("crossing", [
      { type: "Tick", data: { i } },
    ]);
    appended.push(...events.map((e) => e.id));
    t.ok(BigInt(events[0]!.transactionId) >= 100_000n, `appended at ${events[0]!.transactionId}`);
  }
  // Polled: another transaction that ends while a read computes the bound (the harness's
  // projector applying these very ticks) is kept in it for that read, which only lowers it.
  // The reader here stays in flight throughout, so a bound it held back never rises.
  const read = await eventually(
    async () => {
      const events = await readAll(pool, before, 100);
      return events.length >= appended.length ? events : undefined;
    },
    { what: "every appended event is read" },
  );
  t.same(
    read.map((e) => e.id),
    appended,
    "every event appended after it is read while it is in flight, in order",
  );
  await reader.query("COMMIT");
});
