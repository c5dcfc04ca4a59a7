import t, { type Test } from "tap";
import { captureOnce, readCaptureStatus } from "../../src/capture/index.ts";
import { checkReadiness } from "../../src/http/readiness.ts";
import { holdsDirectory } from "../../src/history/index.ts";
import type { Pool } from "../../src/db/index.ts";
import {
  Projector,
  replayProjection,
  schemaNames,
  waitForProjection,
} from "../../src/projector/index.ts";
import {
  missingReaderIndexes,
  READER_INDEX_LOCK,
  readerIndexesOf,
} from "../../src/projector/reader-indexes.ts";
import { entriesProjection, entryVersionsProjection } from "../../projections/index.ts";
import { allProjections } from "../../projections/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { captureFixture, peopleLdif, quietLog, type CaptureFixture } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";
import { armPausePoint } from "../support/pause-points.ts";
import { compareWithReplay } from "../support/projection-replay.ts";
import { restHarness } from "../rest/fixtures/harness.ts";

t.setTimeout(300_000);

const PEOPLE = 40;
const LIVE = schemaNames("entries").live;
const READERS = readerIndexesOf(entriesProjection, LIVE)!;
/** The readers' index a build makes first. */
const FIRST = READERS[0]!.name;

/** What the projector logged, by message. */
function recordingLog() {
  const lines: { message: string; fields: Record<string, unknown> }[] = [];
  const record = (fields: unknown, message?: string) => {
    lines.push({ message: message ?? "", fields: fields as Record<string, unknown> });
  };
  return { lines, log: { ...quietLog, info: record, warn: record, error: record } };
}

/**
 * A directory of forty people imported into the log, not projected yet, and the REST channel
 * over the test's database. The projector (`start`) takes the import in one bulk build, which
 * drops the readers' indexes first (batches of ten, indexes dropped from twenty events on).
 */
async function imported(
  t: Test,
  options: { before?: (f: CaptureFixture) => Promise<void>; importNow?: boolean } = {},
) {
  const f = await captureFixture(t, { seedLdif: peopleLdif(PEOPLE) });
  await options.before?.(f);
  if (options.importNow !== false) await captureOnce(f.context, "accesslog");
  const rest = await restHarness(t, { database: f.db, projector: false });
  const { lines, log } = recordingLog();
  const start = async (options: { indexCheckInterval?: number } = {}) => {
    const projector = await Projector.start({
      pool: f.db.pool,
      projections: allProjections,
      log,
      batchSize: 10,
      firstSnapshots: { chunk: 16, indexesAfter: 20 },
      ...options,
    });
    t.teardown(() => projector.stop());
    return projector;
  };
  return { f, pool: f.db.pool, rest, lines, start };
}

type LoggedLines = ReturnType<typeof recordingLog>["lines"];

/** Every projection has logged its bulk load of the import. */
function everyLoadDone(t: Test, lines: LoggedLines): void {
  const loaded = lines
    .filter((line) => line.message === "first snapshots applied in bulk")
    .map((line) => line.fields.projection);
  t.same(
    [...new Set(loaded)].sort(),
    allProjections.map((projection) => projection.name).sort(),
    "no build started before every bulk load of the import was done",
  );
}

/** Once entry_versions' readers' indexes are built: its build began after entries' ended. */
async function entriesBuiltFirst(t: Test, lines: LoggedLines): Promise<void> {
  const at = (message: string, projection: string) =>
    lines.findIndex((line) => line.message === message && line.fields.projection === projection);
  await eventually(() => at("readers' indexes built", "entry_versions") >= 0, {
    what: "entry_versions' readers' indexes built",
  });
  t.ok(
    at("readers' indexes built", "entries") < at("building the readers' indexes", "entry_versions"),
    "entry_versions' build started after entries' had ended",
  );
}

const lacking = (pool: Pool) => missingReaderIndexes(pool, LIVE, READERS);
const complete = async (pool: Pool) => {
  const { missing, invalid } = await lacking(pool);
  return missing.length === 0 && invalid.length === 0;
};

t.test(
  "the REST channel serves every entry while the readers' indexes are still being built",
  async (t) => {
    const { f, pool, rest, lines, start } = await imported(t);
    const point = armPausePoint(t, "projector.indexes.beforeBuild", { subject: "entries" });
    await start();
    await point.reached({ timeout: 60_000 });
    await waitForProjection(pool, "entries", await f.store.head(), 30_000);

    t.same(
      (await lacking(pool)).missing.map((index) => index.name),
      READERS.map((index) => index.name),
      "the load has committed without the readers' indexes",
    );
    // Analysed by the load itself, not by autovacuum (which counts apart, and comes later).
    const analysed = await pool.query<{ name: string }>(
      `SELECT relname AS name FROM pg_stat_user_tables
        WHERE schemaname = $1 AND last_analyze IS NOT NULL ORDER BY relname`,
      [LIVE],
    );
    t.same(
      analysed.rows.map((row) => row.name),
      ["_checkpoint", "_streams", "entries", "entry_value_counts", "entry_values"],
      "the load gathered the planner's statistics of what it wrote",
    );
    const all = await rest.get("/api/entries/users?include=count");
    t.same(all.json(), { count: PEOPLE }, "a search of every user answers all of them");
    const some = await rest.get(
      `/api/entries/users?include=count&filter=${encodeURIComponent("(cn=*son 3*)")}`,
    );
    t.same(some.json(), { count: 11 }, "a substring filter without its trigram index");
    const page = await rest.get("/api/entries/users?first=5&sort=sn");
    t.equal(page.json().nodes.length, 5, "a sorted page without its index");

    point.release();
    await eventually(() => complete(pool), { what: "every readers' index built and valid" });
    const building = lines.find(
      (line) =>
        line.message === "building the readers' indexes" && line.fields.projection === "entries",
    );
    t.same(
      building?.fields.indexes,
      READERS.map((index) => index.name),
    );
    const built = await eventually(() =>
      lines.find(
        (line) => line.message === "readers' indexes built" && line.fields.projection === "entries",
      ),
    );
    t.type(built.fields.seconds, "number", "the build's seconds are logged");
    for (const projection of allProjections) {
      const same = await compareWithReplay(pool, projection);
      t.same(same.differences, [], `${projection.name} equals its replay`);
    }
  },
);

t.test("an index left invalid, or missing, is built again at the next start", async (t) => {
  const { f, pool, start } = await imported(t);
  const first = await start();
  await waitForProjection(pool, "entries", await f.store.head(), 30_000);
  await eventually(() => complete(pool), { what: "the first build" });
  await first.stop();
  // As PostgreSQL leaves an index whose concurrent build died.
  await pool.query(
    `UPDATE pg_index SET indisvalid = false
      WHERE indexrelid = '"projection_entries".entry_values_trigram'::regclass`,
  );
  await pool.query(`DROP INDEX "projection_entries".entries_parent`);
  t.same(await lacking(pool), {
    missing: READERS.filter((index) =>
      ["entries_parent", "entry_values_trigram"].includes(index.name),
    ),
    invalid: ["entry_values_trigram"],
  });
  await start();
  await eventually(() => complete(pool), { what: "the invalid and the missing index built" });
});

t.test(
  "a build cancelled with pg_cancel_backend leaves an invalid index that the next check builds",
  async (t) => {
    const { pool, lines, start } = await imported(t);
    const point = armPausePoint(t, "projector.indexes.beforeBuild", { subject: "entries" });
    await start({ indexCheckInterval: 100 });
    await point.reached({ timeout: 60_000 });
    // A writer of `entries` in flight: the concurrent build of its first index waits for it,
    // with the index already in the catalog, invalid.
    const writer = await pool.connect();
    t.teardown(() => writer.release());
    await writer.query("BEGIN");
    await writer.query(`LOCK TABLE "projection_entries".entries IN ROW EXCLUSIVE MODE`);
    point.release();
    const builder = await eventually(async () => {
      const result = await pool.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
          WHERE application_name = 'annal-index-builder' AND wait_event_type = 'Lock'
            AND query ILIKE 'CREATE INDEX CONCURRENTLY%' || $1 || '%'`,
        [FIRST],
      );
      return result.rows[0]?.pid;
    });
    await pool.query("SELECT pg_cancel_backend($1)", [builder]);
    await eventually(() =>
      lines.find((line) => line.message === "building readers' indexes failed"),
    );
    t.same((await lacking(pool)).invalid, [FIRST], "left invalid");
    await writer.query("ROLLBACK");
    await eventually(() => complete(pool), { what: "the cancelled build done again" });
    const again = lines.filter(
      (line) =>
        line.message === "building the readers' indexes" && line.fields.projection === "entries",
    );
    t.same(again.at(-1)?.fields.invalid, [FIRST]);
  },
);

t.test("only the holder of the build's lock builds; another process waits its turn", async (t) => {
  const { pool, lines, start } = await imported(t);
  const holder = await pool.connect();
  t.teardown(() => holder.release());
  await holder.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [READER_INDEX_LOCK]);
  await start({ indexCheckInterval: 100 });
  await eventually(() =>
    lines.find(
      (line) =>
        line.message === "readers' indexes being built by another process" &&
        line.fields.projection === "entries",
    ),
  );
  t.equal((await lacking(pool)).missing.length, READERS.length, "nothing built meanwhile");
  await holder.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [READER_INDEX_LOCK]);
  await eventually(() => complete(pool), { what: "built once the lock is free" });
});

t.test(
  "after the loads, one build at a time, in the projections' order: the REST channel's first",
  async (t) => {
    const { f, pool, lines, start } = await imported(t);
    // Held before its build: with builds side by side, entry_versions' would go on meanwhile.
    const point = armPausePoint(t, "projector.indexes.beforeBuild", { subject: "entries" });
    await start();
    await point.reached({ timeout: 60_000 });
    everyLoadDone(t, lines);
    const head = await f.store.head();
    for (const projection of allProjections) {
      await waitForProjection(pool, projection.name, head, 30_000);
    }
    point.release();
    const versions = schemaNames("entry_versions").live;
    const versionReaders = readerIndexesOf(entryVersionsProjection, versions)!;
    await eventually(
      async () => {
        const { missing, invalid } = await missingReaderIndexes(pool, versions, versionReaders);
        return (await complete(pool)) && missing.length === 0 && invalid.length === 0;
      },
      { what: "every readers' index of both built" },
    );
    await entriesBuiltFirst(t, lines);
  },
);

t.test(
  "as annal start has it, the projector tailing the log before the first import commits: the loads first, then the builds in the projections' order",
  async (t) => {
    const { f, pool, lines, start } = await imported(t, { importNow: false });
    await start();
    const before = await f.store.head();
    for (const projection of allProjections) {
      await waitForProjection(pool, projection.name, before, 30_000);
    }
    // Every projection has caught up with the log as it was: the import is a load afresh.
    const point = armPausePoint(t, "projector.indexes.beforeBuild", { subject: "entries" });
    await captureOnce(f.context, "accesslog");
    await point.reached({ timeout: 60_000 });
    everyLoadDone(t, lines);
    t.notOk(
      lines.some((line) => line.message === "building the readers' indexes"),
      "entries' build is the first",
    );
    point.release();
    await entriesBuiltFirst(t, lines);
    t.ok(await complete(pool), "entries' readers' indexes are all there");
  },
);

t.test("a side-by-side rebuild while the readers' indexes are pending stays correct", async (t) => {
  const { f, pool, rest, start } = await imported(t);
  const point = armPausePoint(t, "projector.indexes.beforeBuild", { subject: "entries" });
  await start();
  await point.reached({ timeout: 60_000 });
  await replayProjection({ pool, projection: entriesProjection });
  t.ok(await complete(pool), "the rebuilt schema came with its indexes");
  point.release();
  await f.directory.modify(`uid=p1,ou=people,dc=example,dc=org`, [
    { operation: "replace", attribute: "sn", values: "Changed" },
  ]);
  await captureOnce(f.context, "accesslog");
  await waitForProjection(pool, "entries", await f.store.head(), 30_000);
  t.ok(await complete(pool));
  t.same((await compareWithReplay(pool, entriesProjection)).differences, []);
  const changed = await rest.get(
    `/api/entries/users?include=count&filter=${encodeURIComponent("sn = Changed")}`,
  );
  t.same(changed.json(), { count: 1 });
});

t.test(
  "events of other kinds before the import still let the bulk load drop the indexes",
  async (t) => {
    // A service account made before the first start: its stream is in `_streams` of every
    // projection, yet `entries` holds no row.
    const { f, pool, rest } = await imported(t, {
      before: async (f) => {
        await createToken(f.db.pool, f.store, { name: "early", access: ["read"] });
      },
    });
    const point = armPausePoint(t, "projector.indexes.beforeBuild", { subject: "entries" });
    const projector = await Projector.start({
      pool,
      projections: allProjections,
      log: quietLog,
      batchSize: 10,
      firstSnapshots: { chunk: 16, indexesAfter: 20 },
    });
    t.teardown(() => projector.stop());
    await point.reached({ timeout: 60_000 });
    await waitForProjection(pool, "entries", await f.store.head(), 30_000);
    t.equal((await lacking(pool)).missing.length, READERS.length, "dropped for the load");
    t.same((await rest.get("/api/entries/users?include=count")).json(), { count: PEOPLE });
    point.release();
    await eventually(() => complete(pool), { what: "built after it" });
  },
);

t.test(
  "entries catches up alone: REST serves every user and /readyz is ready before entry_versions applies the import",
  async (t) => {
    const { f, pool, rest, start } = await imported(t);
    const head = await f.store.head();
    // Both held before their bulk loads: entry_versions reaches its point only once entries'
    // load has ended (it held both turns), not beside it.
    const entries = armPausePoint(t, "projector.batch.beforeApply", { subject: "entries" });
    const versions = armPausePoint(t, "projector.batch.beforeApply", {
      subject: "entry_versions",
    });
    const projector = await start();
    await entries.reached({ timeout: 60_000 });
    entries.release();
    await versions.reached({ timeout: 60_000 });
    const snapshots = await pool.query<{ position: string }>(
      "SELECT max(position) AS position FROM events WHERE type = 'EntrySnapshot'",
    );
    const status = await projector.status();
    const at = (name: string) => status.find((s) => s.name === name)!;
    t.ok(
      at("entries").position.position >= Number(snapshots.rows[0]!.position),
      "entries had applied the whole import when entry_versions began",
    );
    t.ok(at("entry_versions").lag > 0, "entry_versions has applied none of it");

    const all = await rest.get("/api/entries/users?include=count");
    t.same(all.json(), { count: PEOPLE }, "a search of every user answers all of them");
    // What the REST channel asks before it answers a search now, and one at a moment (a
    // search at a moment answers 503 ANNAL_HISTORY_BUILDING meanwhile: test/app/first-start-history).
    t.ok(await holdsDirectory(pool, "entries"), "entries holds the directory");
    t.notOk(await holdsDirectory(pool, "entry_versions"), "entry_versions does not yet");
    const ready = await checkReadiness({
      pool,
      projectorStatus: () => projector.status(),
      captureStatus: () => readCaptureStatus(pool, "accesslog"),
      timeoutMs: 10_000,
      log: quietLog,
    });
    t.equal(ready.status, "ready", "/readyz: ready, the directory's entries served");
    t.ok(
      ready.projections.find((p) => p.name === "entry_versions")!.lag > 0,
      "/readyz: entry_versions' lag shown while it catches up",
    );

    versions.release();
    for (const { name } of allProjections) await waitForProjection(pool, name, head, 30_000);
    const later = await rest.get("/api/entries/users?at=now&include=count");
    t.same(later.json(), { count: PEOPLE }, "a search at a moment once entry_versions has it");
  },
);
