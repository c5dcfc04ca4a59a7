import t from "tap";
import {
  readCaptureCheckpoint,
  reconcileByPolling,
  snapshotIfDue,
  startCaptureWorker,
} from "../../src/capture/index.ts";
import type { Pool } from "../../src/db/index.ts";
import { captureFixture, captureLockHolders, person } from "../support/capture.ts";
import { nextSecond } from "../support/clock.ts";
import { eventually } from "../support/eventually.ts";
import { feed } from "../support/history.ts";
import { armPausePoint } from "../support/pause-points.ts";

// The full passes (a periodic snapshot, the poll source's reconciliation) read every entry
// over a while, and capture's passes record what changes meanwhile. Each test stops a full
// pass between reading a page and recording it, changes the directory and captures the
// change, then lets the full pass go on: what it read is then older than the log.

const PEOPLE = "ou=people,dc=example,dc=org";

/** The entry's stream: its events' types and the `title` each left, in order. */
async function titles(pool: Pool, dn: string) {
  const { rows } = await pool.query<{ type: string; title: string[] | null }>(
    `SELECT e.type, coalesce(e.data->'state'->'attributes'->'title',
                             e.data->'after'->'attributes'->'title') AS title
       FROM events AS e
      WHERE e.stream_id = (SELECT 'entry-' || entry_uuid FROM projection_entries.entries
                            WHERE dn = $1)
      ORDER BY e.stream_version`,
    [dn],
  );
  return rows.map((row) => [row.type, row.title]);
}

async function entryTitle(pool: Pool, dn: string) {
  const { rows } = await pool.query<{ title: string[] | null }>(
    "SELECT attributes->'title' AS title FROM projection_entries.entries WHERE dn = $1",
    [dn],
  );
  return rows[0]?.title;
}

t.test(
  "a periodic snapshot leaves alone an entry whose change was captured after it read it",
  async (t) => {
    const f = await captureFixture(t);
    await f.directory.add(`uid=moves,${PEOPLE}`, person("moves", { title: "Old" }));
    await f.directory.add(`uid=still,${PEOPLE}`, person("still", { title: "Same" }));
    await f.sync();

    const point = armPausePoint(t, "capture.import.pageRead", { subject: "periodic" });
    const snapshotting = snapshotIfDue(f.context, 1);
    await point.reached();
    await f.directory.modify(`uid=moves,${PEOPLE}`, [
      { operation: "replace", attribute: "title", values: "New" },
    ]);
    t.equal(await f.sync(), 1, "capture records the change while the snapshot stands");
    point.release();
    t.equal(await snapshotting, true);
    await f.sync();

    t.same(
      await titles(f.db.pool, `uid=moves,${PEOPLE}`),
      [
        ["EntrySnapshot", ["Old"]],
        ["EntryModified", ["New"]],
      ],
      "no snapshot of what the pass read lands on top of the newer change",
    );
    t.same(await entryTitle(f.db.pool, `uid=moves,${PEOPLE}`), ["New"]);
    t.same(
      await titles(f.db.pool, `uid=still,${PEOPLE}`),
      [
        ["EntrySnapshot", ["Same"]],
        ["EntrySnapshot", ["Same"]],
      ],
      "an entry that did not change gets its periodic snapshot",
    );
  },
);

t.test(
  "a reconciliation neither undoes a change captured after it read the entry nor deletes " +
    "an entry added after it read past it",
  async (t) => {
    const f = await captureFixture(t, { source: "poll" });
    await f.directory.add(`uid=moves,${PEOPLE}`, person("moves", { title: "Old" }));
    await f.directory.add(`uid=gone,${PEOPLE}`, person("gone"));
    await f.sync();
    await f.directory.delete(`uid=gone,${PEOPLE}`);

    const point = armPausePoint(t, "capture.poll.pageRead", { subject: "reconcile" });
    const reconciling = reconcileByPolling(f.context);
    await point.reached();
    await nextSecond();
    await f.directory.modify(`uid=moves,${PEOPLE}`, [
      { operation: "replace", attribute: "title", values: "New" },
    ]);
    await f.directory.add(`uid=late,${PEOPLE}`, person("late"));
    t.equal(await f.sync(), 2, "polling records the modify and the add meanwhile");
    point.release();
    t.equal((await reconciling).recorded, 1, "the reconciliation records only the delete");
    await f.sync();

    t.same(
      (await feed(f.db.pool)).map((c) => [c.change_type, c.dn]),
      [
        ["modify", `uid=moves,${PEOPLE}`],
        ["add", `uid=late,${PEOPLE}`],
        ["delete", `uid=gone,${PEOPLE}`],
      ],
    );
    t.same(await entryTitle(f.db.pool, `uid=moves,${PEOPLE}`), ["New"]);
    t.equal(
      (
        await f.db.pool.query(`SELECT 1 FROM projection_entries.entries WHERE dn = $1`, [
          `uid=late,${PEOPLE}`,
        ])
      ).rowCount,
      1,
    );
  },
);

/** Passes 50 ms apart, a snapshot due at once, no reconciliation. */
const schedule = {
  source: "accesslog" as const,
  interval: 50,
  reconcileInterval: 600_000,
  snapshotInterval: 1,
};

/**
 * A worker whose first periodic snapshot stands at its first page, and the snapshot
 * checkpoint the import left (which the snapshot moves when it ends).
 */
async function standingSnapshot(t: { teardown(fn: () => unknown): void }) {
  const f = await captureFixture(t);
  await f.sync();
  const imported = await readCaptureCheckpoint(f.db.pool, "snapshot");
  const point = armPausePoint(t, "capture.import.pageRead", { subject: "periodic" });
  const worker = await startCaptureWorker(f.context, schedule);
  await point.reached();
  return { f, imported, point, worker };
}

t.test("the capture worker captures changes while a periodic snapshot runs", async (t) => {
  const { f, imported, point, worker } = await standingSnapshot(t);
  t.teardown(() => worker.stop());

  await f.directory.add(`uid=fresh,${PEOPLE}`, person("fresh"));
  await eventually(
    async () => (await feed(f.db.pool)).some((c) => c.dn === `uid=fresh,${PEOPLE}`),
    { what: "the add is captured while the snapshot stands at its first page" },
  );
  t.equal(
    await readCaptureCheckpoint(f.db.pool, "snapshot"),
    imported,
    "the snapshot has not ended",
  );
  point.release();
  await eventually(async () => (await readCaptureCheckpoint(f.db.pool, "snapshot")) !== imported, {
    what: "the snapshot ends",
  });
});

t.test("stopping the worker stops its full pass, which does not note that it ran", async (t) => {
  const { f, imported, point, worker } = await standingSnapshot(t);
  let stopped = false;
  const stopping = worker.stop().then(() => {
    stopped = true;
  });
  // The passes' loop ends, letting go of capture's lock; the full pass still stands.
  await eventually(async () => (await captureLockHolders(f.db.pool)).length === 0, {
    what: "the worker lets go of capture's lock",
  });
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(stopped, false, "stop() waits for the full pass");
  point.release();
  await stopping;
  t.equal(await readCaptureCheckpoint(f.db.pool, "snapshot"), imported, "not noted as run");
  const periodic = await f.db.pool.query(
    "SELECT 1 FROM events WHERE type = 'EntrySnapshot' AND data->>'reason' = 'periodic'",
  );
  t.equal(periodic.rowCount, 0, "the page it stood at is not recorded");
});
