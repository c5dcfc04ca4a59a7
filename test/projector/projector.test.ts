import t from "tap";
import { withTransaction, type Pool } from "../../src/db/index.ts";
import {
  Projector,
  projectionStatus,
  type Projection,
  replayProjection,
  waitForProjection,
} from "../../src/projector/index.ts";
import { projectionLag } from "../../src/metrics.ts";
import { comparePositions, EventStore, type LogPosition } from "../../src/store/index.ts";
import { testDatabase } from "../support/postgres.ts";
import { eventually } from "../support/eventually.ts";
import { tallyProjection } from "../support/tally-projection.ts";
import { armPausePoint } from "../support/pause-points.ts";

const quiet = { info() {}, warn() {}, error() {} };

async function tallyRows(pool: Pool) {
  const result = await pool.query(
    "SELECT stream_id, ticks, versions, last FROM projection_tally.streams ORDER BY stream_id",
  );
  return result.rows;
}

const positionOf = (e: LogPosition) => ({ transactionId: e.transactionId, position: e.position });

/**
 * A projection of `Slow` events whose batch, once it has written its first row, says so
 * (`held`) and waits for `gate`: a batch held in flight.
 */
function heldProjection(name: string, gate: Promise<void>, held: () => void): Projection<"Slow"> {
  return {
    name,
    version: 1,
    handles: ["Slow"],
    tables: (table) => [`CREATE TABLE ${table("seen")} (id uuid PRIMARY KEY)`],
    async apply(events, { tx, table }) {
      for (const event of events) {
        await tx.query(`INSERT INTO ${table("seen")} VALUES ($1)`, [event.id]);
        held();
        await gate;
      }
    },
  };
}

t.test("a projection catches up at start and then tails the log", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  await store.appendToStream("a", [
    { type: "Tick", data: { n: 1 } },
    { type: "Other", data: {} },
  ]);
  const projector = await Projector.start({ pool, projections: [tallyProjection()], log: quiet });
  t.teardown(() => projector.stop());
  const { events } = await store.appendToStream("a", [{ type: "Tick", data: { n: 2 } }]);
  await waitForProjection(pool, "tally", positionOf(events[0]!));
  t.same(await tallyRows(pool), [{ stream_id: "a", ticks: 2, versions: [1, 3], last: { n: 2 } }]);
  const [status] = await projector.status();
  t.equal(status!.lag, 0);
  t.equal(status!.builtVersion, 1);
});

t.test(
  "a stream's events are applied in stream order even when the log orders them otherwise",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    // B takes its transaction id first (by appending elsewhere), then A appends version 1 of
    // "s" and commits, then B appends version 2 of "s". B's id is lower: the log's global
    // order puts version 2 before version 1.
    const b = await pool.connect();
    t.teardown(() => b.release());
    await b.query("BEGIN");
    await store.appendToStream("elsewhere", [{ type: "Other", data: {} }], { tx: b });
    await store.appendToStream("s", [{ type: "Tick", data: { v: 1 } }], {
      expectedVersion: "no_stream",
    });
    const second = await store.appendToStream("s", [{ type: "Tick", data: { v: 2 } }], {
      tx: b,
      expectedVersion: 1,
    });
    await b.query("COMMIT");
    // The log is read up to its safe bound, below every transaction still open on the server
    // (other tests' databases share it): both versions show once those have ended.
    const log = await eventually(
      async () => {
        const read = await store.readAll();
        return read.events.filter((e) => e.streamId === "s").length === 2 ? read : undefined;
      },
      { what: "both versions of s in the log" },
    );
    t.same(
      log.events.filter((e) => e.streamId === "s").map((e) => e.streamVersion),
      [2, 1],
      "the global order has version 2 first",
    );

    const projector = await Projector.start({ pool, projections: [tallyProjection()], log: quiet });
    t.teardown(() => projector.stop());
    await waitForProjection(pool, "tally", positionOf(log.events.at(-1)!));
    await waitForProjection(pool, "tally", positionOf(second.events[0]!));
    t.same((await tallyRows(pool))[0].versions, [1, 2], "applied as version 1, then 2, once each");

    // A replay keeps the streams' versions in memory and writes them once before its swap:
    // the same tables, and the live projector goes on from the versions it wrote.
    await replayProjection({ pool, projection: tallyProjection(), batchSize: 1 });
    t.same((await tallyRows(pool))[0].versions, [1, 2], "the replay applied them in stream order");
    const third = await store.appendToStream("s", [{ type: "Tick", data: { v: 3 } }], {
      expectedVersion: 2,
    });
    await waitForProjection(pool, "tally", positionOf(third.events[0]!));
    t.same((await tallyRows(pool))[0].versions, [1, 2, 3], "and the projector went on after it");
  },
);

t.test(
  "replaying a projection gives exactly the tables incremental application gave",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    const projector = await Projector.start({
      pool,
      projections: [tallyProjection()],
      log: quiet,
      batchSize: 7,
    });
    t.teardown(() => projector.stop());
    let last: LogPosition | undefined;
    // Concurrent writers on shared streams, some rolled back, applied incrementally as they go.
    await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; i < 40; i++) {
          await withTransaction(pool, async (tx) => {
            const { events } = await store.appendToStream(
              `s-${(w + i) % 5}`,
              [
                { type: "Tick", data: { w, i } },
                { type: i % 3 === 0 ? "Other" : "Tick", data: { w, i, second: true } },
              ],
              { tx },
            );
            if (i % 9 === 4) throw new Error("rollback");
            last = positionOf(events.at(-1)!);
          }).catch(() => {});
        }
      }),
    );
    const head = await store.head();
    await waitForProjection(pool, "tally", head);
    t.ok(last);
    const incremental = await tallyRows(pool);
    t.equal(incremental.length, 5);

    const progress: Array<[number, number]> = [];
    await replayProjection({
      pool,
      projection: tallyProjection(),
      batchSize: 10,
      onProgress: (done, total) => progress.push([done, total]),
    });
    t.same(await tallyRows(pool), incremental, "the replayed tables equal the incremental ones");
    t.ok(progress.length > 2, "progress was reported along the way");
    t.equal(progress.at(-1)![0], progress.at(-1)![1], "and ends complete");
  },
);

t.test(
  "reads are served from the old tables while a rebuild runs, then swap at once",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    for (let i = 0; i < 50; i++)
      await store.appendToStream(`s-${i % 3}`, [{ type: "Tick", data: { i } }]);
    const projector = await Projector.start({ pool, projections: [tallyProjection()], log: quiet });
    await waitForProjection(pool, "tally", await store.head());
    const before = await tallyRows(pool);
    const seenDuringRebuild: unknown[] = [];
    await replayProjection({
      pool,
      projection: tallyProjection(),
      batchSize: 10,
      onProgress: async () => {
        seenDuringRebuild.push(await tallyRows(pool));
      },
    });
    await projector.stop();
    t.ok(seenDuringRebuild.length > 0);
    t.ok(
      seenDuringRebuild.every((rows) => JSON.stringify(rows) === JSON.stringify(before)),
      "readers kept seeing the complete old tables",
    );
    t.same(await tallyRows(pool), before);
  },
);

t.test("a replay builds the readers' indexes after it has applied the log", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  for (let i = 0; i < 30; i++)
    await store.appendToStream(`s-${i % 3}`, [{ type: "Tick", data: { i } }]);
  const tally = tallyProjection();
  const indexesNow = async (schema: string) =>
    (
      await pool.query<{ indexname: string }>(
        "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname = 'tally_last'",
        [schema],
      )
    ).rows.length;
  const seen: number[] = [];
  const indexed = {
    ...tally,
    indexes: (table: (name: string) => string) => [
      `CREATE INDEX tally_last ON ${table("streams")} ((last ->> 'i'))`,
    ],
    apply: async (
      events: Parameters<typeof tally.apply>[0],
      context: Parameters<typeof tally.apply>[1],
    ) => {
      seen.push(await indexesNow(context.table("x").split(".")[0]!.replaceAll('"', "")));
      await tally.apply(events, context);
    },
  };
  const projector = await Projector.start({ pool, projections: [indexed], log: quiet });
  await waitForProjection(pool, "tally", await store.head());
  await projector.stop();
  t.equal(await indexesNow("projection_tally"), 1, "a new live schema has them at once");
  t.same(seen, [1], "and its batches maintain them");

  seen.length = 0;
  await replayProjection({ pool, projection: indexed, batchSize: 10 });
  t.same(seen, [0, 0, 0], "the replay's batches ran without them");
  t.equal(await indexesNow("projection_tally"), 1, "the swapped-in tables have them");
  t.equal((await tallyRows(pool)).length, 3);
});

t.test("a replay analyzes its new tables as they grow, so its statements use keys", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  for (let i = 0; i < 50; i++)
    await store.appendToStream(`s-${i}`, [{ type: "Tick", data: { i } }]);
  const tally = tallyProjection();
  // What the planner knew of the table when each batch ran (reltuples -1: never analyzed).
  const known: number[] = [];
  const watched = {
    ...tally,
    apply: async (
      events: Parameters<typeof tally.apply>[0],
      context: Parameters<typeof tally.apply>[1],
    ) => {
      const stats = await context.tx.query<{ rows: number }>(
        "SELECT reltuples::int AS rows FROM pg_class WHERE oid = $1::regclass",
        [context.table("streams")],
      );
      known.push(stats.rows[0]!.rows);
      await tally.apply(events, context);
    },
  };
  await replayProjection({ pool, projection: watched, batchSize: 10 });
  // Analyzed after the 1st, 2nd and 4th batches: 10, 20 and 40 streams.
  t.same(known, [-1, 10, 20, 20, 40], "each batch planned with the table's size as of late");
});
t.test("a projection whose version changed in code is rebuilt at start", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  await store.appendToStream("a", [
    { type: "Tick", data: {} },
    { type: "Tick", data: {} },
  ]);
  const v1 = await Projector.start({ pool, projections: [tallyProjection(1)], log: quiet });
  await waitForProjection(pool, "tally", await store.head());
  await v1.stop();
  const v2 = await Projector.start({ pool, projections: [tallyProjection(2)], log: quiet });
  t.teardown(() => v2.stop());
  const [status] = await projectionStatus(pool, [tallyProjection(2)]);
  t.equal(status!.builtVersion, 2);
  const rows = await pool.query("SELECT ticks, doubled FROM projection_tally.streams");
  t.same(rows.rows, [{ ticks: 2, doubled: 4 }], "the new version's tables, fully built");
  const schemas = await pool.query(
    "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'projection_tally%' ORDER BY 1",
  );
  t.same(
    schemas.rows.map((r) => r.nspname),
    ["projection_tally"],
    "no shadow or old schema is left",
  );
});

t.test("two projectors on one database never apply an event twice", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const one = await Projector.start({
    pool,
    projections: [tallyProjection()],
    log: quiet,
    batchSize: 5,
  });
  const two = await Projector.start({
    pool,
    projections: [tallyProjection()],
    log: quiet,
    batchSize: 5,
  });
  t.teardown(async () => {
    await one.stop();
    await two.stop();
  });
  for (let i = 0; i < 200; i++)
    await store.appendToStream(`s-${i % 4}`, [{ type: "Tick", data: { i } }]);
  await waitForProjection(pool, "tally", await store.head());
  const rows = await tallyRows(pool);
  t.same(
    rows.map((r) => r.ticks),
    [50, 50, 50, 50],
  );
  t.ok(rows.every((r) => r.versions.every((v: string, i: number) => Number(v) === i + 1)));
});

t.test("waiting for a position the projection does not reach times out with a code", async (t) => {
  const { pool } = await testDatabase(t);
  await t.rejects(waitForProjection(pool, "tally", { transactionId: "999999", position: 1 }, 50), {
    code: "ANNAL_PROJECTION_TIMEOUT",
    status: 503,
  });
});

/**
 * A projection that takes long over a batch (the entries projection applying an import's
 * snapshots) holds an xid all along. The other projections go on reading the log past it:
 * its batch's transaction is marked as a log reader, which the log's safe bound skips.
 */
t.test("a projection held mid-batch does not hold back another projection", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  let reached!: () => void;
  const held = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const slow = heldProjection("slow", gate, () => reached());
  const projector = await Projector.start({
    pool,
    projections: [slow, tallyProjection()],
    log: quiet,
  });
  t.teardown(async () => {
    release();
    await projector.stop();
  });
  await store.appendToStream("s", [{ type: "Slow", data: {} }]);
  await held;
  const { events } = await store.appendToStream("a", [{ type: "Tick", data: { n: 1 } }]);
  await waitForProjection(pool, "tally", positionOf(events[0]!));
  t.same(await tallyRows(pool), [{ stream_id: "a", ticks: 1, versions: [1], last: { n: 1 } }]);
  const seen = await pool.query("SELECT count(*)::int AS n FROM projection_slow.seen");
  t.equal(seen.rows[0].n, 0, "while the slow projection's batch is still in flight");
  release();
  await waitForProjection(pool, "slow", positionOf(events[0]!));
});

t.test("projections catching up from the start take turns, two at a time", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const held = new Set<string>();
  let bothHeld!: () => void;
  const whenBothHeld = new Promise<void>((resolve) => (bothHeld = resolve));
  const gated = (name: string) =>
    heldProjection(name, gate, () => {
      held.add(name);
      if (held.size === 2) bothHeld();
    });
  await store.appendToStream("s", [{ type: "Slow", data: {} }]);
  const { events } = await store.appendToStream("a", [{ type: "Tick", data: { n: 1 } }]);
  const projector = await Projector.start({
    pool,
    projections: [gated("first"), gated("second"), tallyProjection()],
    log: quiet,
    catchUpTogether: 2,
  });
  t.teardown(async () => {
    release();
    await projector.stop();
  });
  await whenBothHeld;
  const [, , tally] = await projector.status();
  t.equal(tally!.lag, 2, "the third waits while the first two hold both turns");
  release();
  await waitForProjection(pool, "tally", positionOf(events[0]!));
  t.same(await tallyRows(pool), [{ stream_id: "a", ticks: 1, versions: [1], last: { n: 1 } }]);
});

t.test(
  "a notification that comes while a projection is busy is not lost: it applies at once, not at the next poll",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    // A poll far beyond the test's wait: only the notification can wake the projection.
    const projector = await Projector.start({
      pool,
      projections: [tallyProjection()],
      log: quiet,
      pollInterval: 600_000,
    });
    t.teardown(() => projector.stop());
    const first = await store.appendToStream("a", [{ type: "Tick", data: { n: 1 } }]);
    await waitForProjection(pool, "tally", positionOf(first.events[0]!));

    // The projection has read its batch (the first of these) and stands before applying it;
    // the second append commits and notifies while no loop sleeps.
    const reading = armPausePoint(t, "projector.batch.beforeApply", { subject: "tally" });
    const second = await store.appendToStream("a", [{ type: "Tick", data: { n: 2 } }]);
    await reading.reached();
    const third = await store.appendToStream("a", [{ type: "Tick", data: { n: 3 } }]);
    reading.release();
    await waitForProjection(pool, "tally", positionOf(second.events[0]!));
    await waitForProjection(pool, "tally", positionOf(third.events[0]!), 10_000);
    t.same((await tallyRows(pool))[0]?.ticks, 3, "every tick applied");
  },
);

t.test(
  "an append in the projector's own process wakes it as it commits, before its notification comes back",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    // A poll far beyond the test's wait, and the notification held in flight: only the
    // append's own commit, told in this process, can wake the projection.
    const projector = await Projector.start({
      pool,
      projections: [tallyProjection()],
      log: quiet,
      pollInterval: 600_000,
    });
    t.teardown(() => projector.stop());
    const notifying = armPausePoint(t, "store.notify.beforeSend");
    const { events } = await store.appendToStream("a", [{ type: "Tick", data: { n: 1 } }]);
    await notifying.reached();
    await waitForProjection(pool, "tally", positionOf(events[0]!));
    t.same((await tallyRows(pool))[0]?.ticks, 1, "applied while the notification was held");
    notifying.release();
  },
);

t.test("a projection's batches commit without waiting for the disk", async (t) => {
  const { pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const settings: string[] = [];
  const projector = await Projector.start({
    pool,
    projections: [
      {
        name: "commits",
        version: 1,
        handles: ["Tick"],
        tables: () => [],
        async apply(_events, { tx }) {
          const { rows } = await tx.query<{ setting: string }>(
            "SELECT current_setting('synchronous_commit') AS setting",
          );
          settings.push(rows[0]!.setting);
        },
      } satisfies Projection<"Tick">,
    ],
    log: quiet,
  });
  t.teardown(() => projector.stop());
  const { events } = await store.appendToStream("a", [{ type: "Tick", data: { n: 1 } }]);
  await waitForProjection(pool, "commits", positionOf(events[0]!));
  t.same(settings, ["off"], "synchronous_commit off in the batch's transaction");
  const { rows } = await pool.query<{ setting: string }>(
    "SELECT current_setting('synchronous_commit') AS setting",
  );
  t.equal(rows[0]!.setting, "on", "and on again for the pool's next user");
});

/** Until each of `names` has read the log once and gone to sleep (its lag metric is set then). */
async function asleep(names: readonly string[]) {
  await eventually(
    async () => {
      const { values } = await projectionLag.get();
      return names.every((name) => values.some((v) => v.labels.projection === name));
    },
    { what: "every projection asleep" },
  );
}

/** The position projection `name` has committed, read outside any batch. */
async function committed(pool: Pool, name: string): Promise<LogPosition> {
  const { rows } = await pool.query<{ transaction_id: string; position: string }>(
    `SELECT transaction_id::text, position::text FROM projection_${name}._checkpoint`,
  );
  return { transactionId: rows[0]!.transaction_id, position: Number(rows[0]!.position) };
}

t.test(
  "a notification wakes the first projection alone, and the others once its batch has committed",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    // The first projection's batch takes long; each of the others, as it applies the Tick,
    // notes whether the first had committed it by then. Woken together, they applied it
    // while the first was still at work.
    const seen: { name: string; first: LogPosition }[] = [];
    const witness = (name: string): Projection<"Tick"> => ({
      name,
      version: 1,
      handles: ["Tick"],
      tables: () => [],
      async apply() {
        seen.push({ name, first: await committed(pool, "leader") });
      },
    });
    const projector = await Projector.start({
      pool,
      projections: [
        {
          name: "leader",
          version: 1,
          handles: ["Tick"],
          tables: () => [],
          async apply(_events, { tx }) {
            await tx.query("SELECT pg_sleep(0.3)");
          },
        } satisfies Projection<"Tick">,
        witness("second"),
        witness("third"),
      ],
      log: quiet,
      // Only the notification wakes them, and the others wait for the first however long.
      pollInterval: 600_000,
      othersHeldAtMost: 600_000,
    });
    t.teardown(() => projector.stop());
    await asleep(["leader", "second", "third"]);
    const { events } = await store.appendToStream("a", [{ type: "Tick", data: { n: 1 } }]);
    const tick = positionOf(events[0]!);
    for (const name of ["leader", "second", "third"]) {
      await waitForProjection(pool, name, tick);
    }
    t.same(
      seen
        .map(({ name, first }) => ({ name, firstDone: comparePositions(first, tick) >= 0 }))
        .sort((a, b) => a.name.localeCompare(b.name)),
      [
        { name: "second", firstDone: true },
        { name: "third", firstDone: true },
      ],
    );
  },
);

t.test(
  "a first projection whose batch does not end holds the others back only othersHeldAtMost",
  async (t) => {
    const { pool } = await testDatabase(t);
    const store = await EventStore.open(pool);
    const projector = await Projector.start({
      pool,
      projections: [
        { ...tallyProjection(), name: "held" },
        { ...tallyProjection(), name: "other" },
      ],
      log: quiet,
      pollInterval: 600_000,
      othersHeldAtMost: 50,
    });
    t.teardown(() => projector.stop());
    await asleep(["held", "other"]);
    const holding = armPausePoint(t, "projector.batch.beforeApply", { subject: "held" });
    const { events } = await store.appendToStream("a", [{ type: "Tick", data: { n: 1 } }]);
    await holding.reached();
    await waitForProjection(pool, "other", positionOf(events[0]!));
    t.ok(
      comparePositions(await committed(pool, "held"), positionOf(events[0]!)) < 0,
      "the other applied it while the first's batch was held",
    );
    holding.release();
    await waitForProjection(pool, "held", positionOf(events[0]!));
  },
);
