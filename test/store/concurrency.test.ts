import t from "tap";
import { withTransaction } from "../../src/db/index.ts";
import { EventStore, START, readAll, type LogPosition } from "../../src/store/index.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * 8 writers append 20,000 events in short and long transactions, about a tenth of them rolled
 * back, while a reader tails the log. The reader must see every committed event exactly once
 * and never a rolled-back one.
 *
 * Long transactions are what make this hard: a writer takes its positions, then others
 * commit higher positions before it does. Remove the in-flight guard from `readAll` (its
 * `belowSafeBound` condition) and this test fails: the reader passes the
 * long transaction's events and misses them (the deterministic version of that is
 * "readers never pass a transaction that is still in flight" in read-all.test.ts).
 */
const WRITERS = 8;
const TOTAL = 20_000;

t.test("a tailing reader sees every committed event exactly once", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const committed = new Set<string>();
  const rolledBack = new Set<string>();
  let appended = 0;
  let writing = WRITERS;

  const writer = async (w: number) => {
    let round = 0;
    while (appended < TOTAL) {
      round++;
      const long = round % 7 === 0;
      const rollback = round % 10 === 3;
      const size = long ? 40 : 1 + (round % 5);
      appended += size;
      const ids: string[] = [];
      const attempt = withTransaction(pool, async (tx) => {
        const { events } = await store.appendToStream(
          `writer-${w}-${round % 13}`,
          Array.from({ length: size }, () => ({ type: "Tick", data: { w, round } })),
          { tx },
        );
        ids.push(...events.map((e) => e.id));
        // A long transaction holds its positions while other writers commit past them.
        if (long) await new Promise((resolve) => setTimeout(resolve, 15));
        if (rollback) throw new Error("rolled back on purpose");
      });
      try {
        await attempt;
        for (const id of ids) committed.add(id);
      } catch {
        for (const id of ids) rolledBack.add(id);
      }
    }
    writing--;
  };

  const seen: string[] = [];
  const reader = async () => {
    let after: LogPosition = START;
    for (;;) {
      const done = writing === 0;
      const events = await readAll(pool, after, 500);
      for (const event of events) seen.push(event.id);
      const last = events.at(-1);
      if (last) after = { transactionId: last.transactionId, position: last.position };
      else if (done) return;
      else await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };

  await Promise.all([...Array.from({ length: WRITERS }, (_, w) => writer(w)), reader()]);

  t.ok(committed.size >= TOTAL * 0.8, `committed ${committed.size} events`);
  t.ok(rolledBack.size > 0, `rolled back ${rolledBack.size} events`);
  t.equal(new Set(seen).size, seen.length, "no event was read twice");
  t.equal(seen.filter((id) => rolledBack.has(id)).length, 0, "no rolled-back event was read");
  const seenIds = new Set(seen);
  t.equal(
    [...committed].filter((id) => !seenIds.has(id)).length,
    0,
    "every committed event was read",
  );
});
