import t from "tap";
import type { Pool, Queryable } from "../../src/db/index.ts";
import { metrics } from "../../src/metrics.ts";
import { Projector, waitForProjection } from "../../src/projector/index.ts";
import { SharedLogReads, type ReadBatch } from "../../src/projector/shared-reads.ts";
import { EventStore, readAll, readHead, START, type LogPosition } from "../../src/store/index.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";
import { tallyProjection } from "../support/tally-projection.ts";

const quiet = { info() {}, warn() {}, error() {} };

/** `readAll`, counting the reads that reach the database. */
function countingRead(): { read: ReadBatch; positions: LogPosition[] } {
  const positions: LogPosition[] = [];
  return {
    positions,
    read: (db: Queryable, after: LogPosition, limit: number) => {
      positions.push(after);
      return readAll(db, after, limit);
    },
  };
}

async function appendTicks(pool: Pool, count: number): Promise<void> {
  const store = await EventStore.open(pool);
  for (let i = 0; i < count; i += 50) {
    const ticks = Array.from({ length: Math.min(50, count - i) }, (_, k) => ({
      type: "Tick",
      data: { i: i + k },
    }));
    await store.appendToStream(`s-${(i / 50) % 4}`, ticks);
  }
  // The safe bound is conservative: a transaction of another test's database that ends while
  // a read is deciding can hold the bound below these events for that one read. Every test
  // here counts the events a read hands out, so it starts once all of them are readable.
  const total = await readHead(pool);
  await eventually(
    async () => (await readAll(pool, START, 100_000)).at(-1)?.position === total.position,
    { what: "every appended event is readable" },
  );
}

t.test("a full batch is read from the database once for every reader", async (t) => {
  const { pool } = await testDatabase(t);
  await appendTicks(pool, 25);
  const counting = countingRead();
  const reads = new SharedLogReads({ keep: 4, read: counting.read });

  const first = await reads.read(pool, START, 10);
  const second = await reads.read(pool, START, 10);
  t.equal(first.length, 10);
  t.equal(second, first, "the second reader is handed the first one's events");
  t.equal(counting.positions.length, 1);
  t.same(first, await readAll(pool, START, 10), "the events readAll gives");

  const next = await reads.read(pool, first.at(-1)!, 10);
  t.same(
    next.map((e) => e.position),
    (await readAll(pool, first.at(-1)!, 10)).map((e) => e.position),
    "a batch at another position is that position's own",
  );
  t.equal(counting.positions.length, 2);
});

t.test("the log's tail, a batch shorter than asked, is read by each reader", async (t) => {
  const { pool } = await testDatabase(t);
  await appendTicks(pool, 25);
  const counting = countingRead();
  const reads = new SharedLogReads({ keep: 4, read: counting.read });
  const head = (await readAll(pool, START, 20)).at(-1)!;

  t.equal((await reads.read(pool, head, 10)).length, 5);
  await appendTicks(pool, 10);
  t.equal((await reads.read(pool, head, 10)).length, 10, "the second reader sees the new events");
  t.equal(counting.positions.length, 2);
});

t.test(
  "a reader that joins a read under way which ends short reads the tail again for itself",
  async (t) => {
    const { pool } = await testDatabase(t);
    await appendTicks(pool, 5);
    let calls = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const reads = new SharedLogReads({
      keep: 4,
      read: async (db, after, limit) => {
        calls++;
        // The first read's snapshot is taken before the append below, and it answers after it.
        const events = await readAll(db, after, limit);
        if (calls === 1) await released;
        return events;
      },
    });
    const first = reads.read(pool, START, 10);
    await eventually(() => calls === 1, { what: "the first read has read" });
    await appendTicks(pool, 3);
    // Woken by the append's notification, the second reader asks while the first read is
    // still under way.
    const second = reads.read(pool, START, 10);
    release();
    t.equal((await first).length, 5, "the first read ends with the tail it read");
    t.equal((await second).length, 8, "the second reader sees the append it was woken for");
    t.equal(calls, 2);
  },
);

t.test("a reader whose shared read failed reads for itself", async (t) => {
  const { pool } = await testDatabase(t);
  await appendTicks(pool, 25);
  let calls = 0;
  const reads = new SharedLogReads({
    keep: 4,
    read: async (db, after, limit) => {
      calls++;
      if (calls === 1) {
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error("the first reader's transaction failed");
      }
      return readAll(db, after, limit);
    },
  });
  const first = reads.read(pool, START, 10);
  const second = reads.read(pool, START, 10);
  await t.rejects(first, /first reader's transaction failed/);
  t.equal((await second).length, 10);
  t.equal(calls, 2);
  t.equal((await reads.read(pool, START, 10)).length, 10);
  t.equal(calls, 3, "the failed read was not kept: the next reader reads");
});

t.test("only the newest batches are kept", async (t) => {
  const { pool } = await testDatabase(t);
  await appendTicks(pool, 30);
  const counting = countingRead();
  const reads = new SharedLogReads({ keep: 2, read: counting.read });
  const batches = [START];
  for (let i = 0; i < 3; i++) batches.push((await reads.read(pool, batches.at(-1)!, 10)).at(-1)!);
  t.equal(counting.positions.length, 3);
  await reads.read(pool, batches[2]!, 10);
  t.equal(counting.positions.length, 3, "the newest is still kept");
  await reads.read(pool, START, 10);
  t.equal(counting.positions.length, 4, "the oldest was let go, and is read again");
});

t.test(
  "projections catching up together share their reads and each applies every event",
  async (t) => {
    const { pool } = await testDatabase(t);
    await appendTicks(pool, 2_000);
    const shared = async () => {
      const metric = await metrics.getSingleMetric("annal_projector_batch_reads_total")!.get();
      return metric.values.find((v) => v.labels.source === "shared")?.value ?? 0;
    };
    const sharedBefore = await shared();
    const projections = ["one", "two", "three"].map((name) => ({ ...tallyProjection(), name }));
    const projector = await Projector.start({ pool, projections, log: quiet, batchSize: 100 });
    t.teardown(() => projector.stop());
    const head = await readHead(pool);
    for (const { name } of projections) {
      await waitForProjection(pool, name, head, 30_000);
      const ticks = await pool.query<{ ticks: number; versions: string[] }>(
        `SELECT ticks, versions FROM projection_${name}.streams ORDER BY stream_id`,
      );
      t.same(
        ticks.rows.map((r) => r.ticks),
        [500, 500, 500, 500],
        `${name} applied every event once`,
      );
      t.ok(
        ticks.rows.every((r) => r.versions.every((v, k) => Number(v) === k + 1)),
        `${name} applied each stream in order`,
      );
    }
    t.ok((await shared()) > sharedBefore, "some batches were read once for several projections");
  },
);
