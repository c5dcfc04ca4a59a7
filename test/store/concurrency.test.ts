import t from "tap";
import { withTransaction } from "../../src/db/index.ts";
import {
  EventStore,
  START,
  markLogReader,
  readAll,
  type LogPosition,
} from "../../src/store/index.ts";
import { eventually } from "../support/eventually.ts";
import { armPausePoint } from "../support/pause-points.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * 8 writers append 20,000 events in short and long transactions, about a tenth of them rolled
 * back, while a reader tails the log. The reader must see every committed event exactly once
 * and never a rolled-back one.
 *
 * Long transactions are what make this hard: a writer takes its positions, then others
 * commit higher positions before it does, and a reader reads those. Here that happens to
 * every long transaction, by construction rather than by timing: its append stops at the
 * store's pause point `store.append.afterInsert` (events inserted, transaction in flight)
 * until a transaction begun after it (so with a higher transaction id and higher positions)
 * has committed and the reader has read to the end of what it may read since. Remove the
 * in-flight guard from `readAll` (its `belowSafeBound` condition) and this test fails on every
 * run: that read moves the reader's cursor past the stopped transaction, which then commits
 * behind it and is never read (the two-transaction version is "readers never pass a
 * transaction that is still in flight" in read-all.test.ts).
 *
 * Meanwhile a log reader (what a projection's batch is) holds transactions with xids open,
 * marked by `markLogReader`, each until the tailing reader has read an event of a later
 * transaction: the safe bound skips them, and exactly once still holds.
 */
const WRITERS = 8;
const TOTAL = 20_000;
const PAGE = 500;

t.test("a tailing reader sees every committed event exactly once", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const committed = new Set<string>();
  const rolledBack = new Set<string>();
  let appended = 0;
  let writing = WRITERS;
  // Transactions begun so far: one begun after another has drawn positions draws higher ones.
  let begun = 0;
  // Transactions ended so far, committed or rolled back.
  let ended = 0;
  // The highest `begun` number of a committed transaction.
  let committedBegunAt = 0;
  // `ended` as it was when the reader began its latest read that reached the end of the
  // readable log (fewer than a page).
  let caughtUpAt = -1;
  let overtaken = 0;
  // The highest transaction id the reader has read, and how often it read past a marked
  // log reader's transaction while that was in flight.
  let readUpTo = 0n;
  let passedLogReaders = 0;
  await pool.query("CREATE TABLE applied (xid xid8)");

  /**
   * Holds a long transaction stopped at the pause point while a later one commits past it
   * and the reader catches up; lets it go at once when the other writers are done.
   */
  const holdInFlight = async (point: ReturnType<typeof armPausePoint>) => {
    await point.reached();
    const heldAt = begun;
    await eventually(() => committedBegunAt > heldAt || appended >= TOTAL, {
      what: "a later transaction commits past the one in flight",
      interval: 1,
    });
    if (committedBegunAt > heldAt) {
      const after = ended;
      await eventually(() => caughtUpAt >= after, {
        what: "the reader reads what it may after that commit",
        interval: 1,
      });
      overtaken++;
    }
    point.release();
  };

  const writer = async (w: number) => {
    for (let round = 1; appended < TOTAL; round++) {
      // Only the even writers hold transactions open, so the odd ones always go on.
      const long = w % 2 === 0 && round % 7 === 0;
      const rollback = round % 10 === 3;
      const size = long ? 40 : 1 + (round % 5);
      const stream = `writer-${w}-${round % 13}`;
      appended += size;
      const ids: string[] = [];
      const point = long
        ? armPausePoint(t, "store.append.afterInsert", { subject: stream })
        : undefined;
      const begunAt = ++begun;
      const attempt = withTransaction(pool, async (tx) => {
        const { events } = await store.appendToStream(
          stream,
          Array.from({ length: size }, () => ({ type: "Tick", data: { w, round } })),
          { tx },
        );
        ids.push(...events.map((e) => e.id));
        if (rollback) throw new Error("rolled back on purpose");
      });
      if (point) await holdInFlight(point);
      try {
        await attempt;
        for (const id of ids) committed.add(id);
        committedBegunAt = Math.max(committedBegunAt, begunAt);
      } catch {
        for (const id of ids) rolledBack.add(id);
      }
      ended++;
    }
    writing--;
  };

  const logReader = async () => {
    while (writing > 0) {
      await withTransaction(pool, async (tx) => {
        await markLogReader(tx);
        const inserted = await tx.query<{ xid: string }>(
          "INSERT INTO applied VALUES (pg_current_xact_id()) RETURNING xid::text",
        );
        const xid = BigInt(inserted.rows[0]!.xid);
        await eventually(() => readUpTo > xid || writing === 0, {
          what: "the reader reads past the log reader's transaction in flight",
          interval: 1,
        });
        if (readUpTo > xid) passedLogReaders++;
      });
    }
  };

  const seen: string[] = [];
  const reader = async () => {
    let after: LogPosition = START;
    for (;;) {
      const done = writing === 0;
      const endedBefore = ended;
      const events = await readAll(pool, after, PAGE);
      if (events.length < PAGE) caughtUpAt = endedBefore;
      for (const event of events) {
        seen.push(event.id);
        const xid = BigInt(event.transactionId);
        if (xid > readUpTo) readUpTo = xid;
      }
      const last = events.at(-1);
      if (last) after = { transactionId: last.transactionId, position: last.position };
      else if (done) return;
      else {
        await eventually(() => ended !== endedBefore || writing === 0, {
          what: "a transaction ends",
          interval: 1,
        });
      }
    }
  };

  await Promise.all([
    ...Array.from({ length: WRITERS }, (_, w) => writer(w)),
    reader(),
    logReader(),
  ]);

  t.ok(committed.size >= TOTAL * 0.8, `committed ${committed.size} events`);
  t.ok(rolledBack.size > 0, `rolled back ${rolledBack.size} events`);
  t.ok(overtaken > 10, `${overtaken} transactions in flight were passed by later commits`);
  t.ok(passedLogReaders > 10, `${passedLogReaders} log readers in flight were read past`);
  t.equal(new Set(seen).size, seen.length, "no event was read twice");
  t.equal(seen.filter((id) => rolledBack.has(id)).length, 0, "no rolled-back event was read");
  const seenIds = new Set(seen);
  t.equal(
    [...committed].filter((id) => !seenIds.has(id)).length,
    0,
    "every committed event was read",
  );
});
