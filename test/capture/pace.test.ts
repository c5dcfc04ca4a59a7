import t from "tap";
import { importEntries, paceByProjections, snapshotIfDue } from "../../src/capture/index.ts";
import { Projector, waitForProjection, type Projection } from "../../src/projector/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { allProjections } from "../../projections/index.ts";
import { captureFixture, peopleLdif, quietLog } from "../support/capture.ts";
import { testDatabase } from "../support/postgres.ts";

/** A projection that only moves its checkpoint. */
const follower = (name: string): Projection<"Page"> => ({
  name,
  version: 1,
  handles: ["Page"],
  tables: () => [],
  apply: async () => {},
});
const FOLLOWERS = ["pace_a", "pace_b"];

async function followed(t: { teardown(fn: () => unknown): void }) {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  let page = 0;
  const writePage = () =>
    store.appendToStream(`page-${page}`, [{ type: "Page", data: { page: page++ } }]);
  /** Runs the projector until every follower has applied the log as it stands. */
  const catchUp = async () => {
    const projector = await Projector.start({
      pool,
      projections: FOLLOWERS.map(follower),
      log: quietLog,
    });
    try {
      const head = await store.head();
      for (const name of FOLLOWERS) await waitForProjection(pool, name, head, 30_000);
    } finally {
      await projector.stop();
    }
  };
  return { pool, writePage, catchUp };
}

const since = (started: number) => performance.now() - started;

/**
 * A longest wait no test reaches: a pace that should not wait, or whose wait an abort should
 * end, and waits for it anyway holds its test until tap's timeout fails it. No bound on the
 * time the pace took, which a loaded machine could exceed.
 */
const NEVER_MS = 24 * 60 * 60 * 1000;

t.test("a paced pass waits until every projection has applied its page before last", async (t) => {
  const { pool, writePage, catchUp } = await followed(t);
  await writePage();
  await catchUp();

  const pace = paceByProjections(pool, FOLLOWERS, { maxWaitMs: NEVER_MS });
  await pace(); // notes where the log stands; nothing written before it to wait for
  await writePage();
  await pace(); // the page before the last one is applied: no wait
  t.pass("the page before the last one is applied: no wait");

  // No projector runs now: the page written after the last call is not applied.
  const held = paceByProjections(pool, FOLLOWERS, { maxWaitMs: 1_000 });
  const patient = paceByProjections(pool, FOLLOWERS, { maxWaitMs: NEVER_MS });
  await held();
  await writePage();
  await held();
  await writePage();
  const started = performance.now();
  await held();
  // A lower bound only: load makes a wait longer, never shorter.
  t.ok(since(started) >= 950, `held for its longest wait (${Math.round(since(started))} ms)`);

  await patient(); // notes the log with every page written
  await catchUp();
  await patient(); // every page applied: no wait, however long it may wait
  t.pass("applied: no longer held");
});

t.test("an aborted pass stops waiting for the projections at once", async (t) => {
  const { pool, writePage, catchUp } = await followed(t);
  await writePage();
  await catchUp();
  const stopping = new AbortController();
  const pace = paceByProjections(pool, FOLLOWERS, { maxWaitMs: NEVER_MS, signal: stopping.signal });
  await pace();
  await writePage();
  await pace();
  await writePage();
  const waiting = pace();
  stopping.abort();
  await waiting; // the wait ends with the signal: its longest is never reached
  t.pass("the wait ended with the signal");
});

t.test("an import calls its pace before it writes each page", async (t) => {
  const f = await captureFixture(t, { seedLdif: peopleLdif(7) });
  const written: number[] = [];
  const count = async () =>
    Number(
      (await f.db.pool.query("SELECT count(*) AS n FROM events WHERE type = 'EntrySnapshot'"))
        .rows[0].n,
    );
  const { recorded } = await importEntries(f.context, {
    reason: "periodic",
    pageSize: 3,
    pace: async () => {
      written.push(await count());
    },
  });
  t.ok(written.length >= 3, `a call a page (${written.length} pages)`);
  t.same(
    written,
    written.map((_, page) => page * 3),
    "each before its page is written",
  );
  t.equal(await count(), recorded);
});

t.test("a periodic snapshot paced by every projection records every entry", async (t) => {
  const f = await captureFixture(t, { seedLdif: peopleLdif(5) });
  await f.sync(); // the first import, with the projector running
  const before = await f.db.pool.query("SELECT count(*)::int AS n FROM events");
  t.equal(
    await snapshotIfDue(
      f.context,
      1,
      undefined,
      allProjections.map((projection) => projection.name),
    ),
    true,
  );
  const after = await f.db.pool.query("SELECT count(*)::int AS n FROM events");
  const entries = await f.db.pool.query(
    "SELECT count(*)::int AS n FROM events WHERE metadata->>'source' = 'import'",
  );
  t.equal(after.rows[0].n - before.rows[0].n, entries.rows[0].n, "a snapshot of every entry");
});
