import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import {
  createNormalizer,
  ensureImported,
  importEntries,
  startCaptureWorker,
  type CaptureContext,
} from "../src/capture/index.ts";
import { loadDirectorySchema } from "../src/directory/schema.ts";
import { Projector, waitForProjection } from "../src/projector/index.ts";
import { EventStore, readHead } from "../src/store/index.ts";
import { BUILT_IN_REDACTED_ATTRIBUTES } from "../src/config/index.ts";
import { allProjections } from "../projections/index.ts";
import { SLAPD_BASE, SLAPD_ROOT_DN } from "../src/slapd/index.ts";
import {
  benchDatabase,
  benchSize,
  cpuMs,
  endedChildrenCpuMs,
  fmt,
  machine,
  machineCpuMs,
  percentile,
  rateTheCoresAllow,
  recordResults,
  restOfMachineMs,
  sampleDirectory,
  type SampleDirectory,
  sampleDirectoryToml,
  sizeOption,
  time,
} from "./support.ts";

const run = promisify(execFile);

/** People in the sample directory; `--size 1m` for 1,000,000. */
const ENTRIES = benchSize(100_000);
const LARGE = ENTRIES !== 100_000;
/** Turns of the import row, each an `annal import` and a paged `ldapsearch`. */
const IMPORT_TURNS = 3;
const LAG_SAMPLES = 200;
/** The configuration's default \`[directory.capture] interval\`. */
const DEFAULT_INTERVAL = 250;
const VERSIONS = 1_000_000;
const LOOKUPS = 2_000;
const quiet = { info() {}, warn() {}, error() {}, debug() {} };
/** Quiet but for failures: a projection or capture pass that fails shows in the lag. */
const failures = {
  ...quiet,
  warn: (...args: unknown[]) => process.stderr.write(`bench: capture: warn ${format(args)}\n`),
  error: (...args: unknown[]) => process.stderr.write(`bench: capture: error ${format(args)}\n`),
};
const format = (args: unknown[]) =>
  args.map((arg) => (typeof arg === "string" ? arg : JSON.stringify(arg))).join(" ");

export async function captureBenchmark(): Promise<void> {
  const sample = await sampleDirectory("capture", ENTRIES);
  const { people, client: directory } = sample;
  const db = await benchDatabase();
  try {
    const store = await EventStore.open(db.pool);
    const schema = await loadDirectorySchema(directory);
    const context: CaptureContext = {
      pool: db.pool,
      store,
      directory,
      normalizer: createNormalizer(schema, {
        types: [
          { name: "user", base: `ou=people,${SLAPD_BASE}`, filter: "(objectClass=inetOrgPerson)" },
        ],
        capture: {
          source: "accesslog",
          interval: 2000,
          reconcileInterval: 600_000,
          snapshotInterval: 0,
          redact: [...BUILT_IN_REDACTED_ATTRIBUTES],
        },
      }),
      base: SLAPD_BASE,
      log: quiet,
    };

    // 1. Import rate against a plain paged ldapsearch of the same entries, taking turns: the
    // baseline's own rate moves by half between runs on a shared machine.
    const ldapsearchSeconds: number[] = [];
    const importRates: number[] = [];
    const cpu = { import: [] as RunCpu[], ldapsearch: [] as RunCpu[] };
    let importedEntries = 0;
    for (let turn = 0; turn < IMPORT_TURNS; turn++) {
      cpu.ldapsearch.push(
        await cpuOf(sample, async () => {
          ldapsearchSeconds.push(await time(() => pagedLdapsearch(sample)));
        }),
      );
      const turnImport = await annalImport(sample);
      importRates.push(turnImport.rate);
      cpu.import.push(turnImport.cpu);
      importedEntries = turnImport.entries;
    }
    const ldapsearchRate = ENTRIES / median(ldapsearchSeconds);
    const importRate = median(importRates);
    // The log the lag is measured over: one import as `annal import` runs it, in this process.
    const imported = (await importEntries(context, { reason: "import", writers: 2 })).recorded;

    // 2. Capture lag: from a directory write returning to its row in `changes`, with the
    // capture worker as annal runs it (a pass every interval in the process holding capture's lock).
    await db.pool.query("DELETE FROM capture_checkpoints");
    // The first start's import (one page at a time); it also sets capture's checkpoint.
    let firstStartImported = 0;
    const firstStartSeconds = await time(() => ensureImported(context, "accesslog"));
    firstStartImported =
      (
        await db.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM events WHERE metadata->>'source' = 'import'",
        )
      ).rows[0]!.n - imported;
    const projector = await Projector.start({
      pool: db.pool,
      projections: allProjections,
      log: failures,
    });
    const importedHead = await readHead(db.pool);
    const uuidOf = new Map(
      (
        await db.pool.query<{ entry_uuid: string; dn: string }>(
          `SELECT DISTINCT data->>'entryUUID' AS entry_uuid, data->'state'->>'dn' AS dn
             FROM events
            WHERE type = 'EntrySnapshot' AND lower(data->'state'->>'dn') = ANY($1::text[])`,
          [people.slice(5, 5 + 3 * LAG_SAMPLES).map((person) => person.dn.toLowerCase())],
        )
      ).rows.map((row) => [row.dn.toLowerCase(), row.entry_uuid]),
    );
    if (uuidOf.size !== 3 * LAG_SAMPLES) throw new Error("the people written to were not imported");
    let written = 0;
    /** Writes `count` people's titles in turn and waits for each change in `changes`. */
    /**
     * Writes `count` people's titles in turn, each at a random moment within `interval` of the
     * last one's capture (a directory's writes do not keep time with annal's passes), and
     * waits for each change in `changes`.
     */
    const sampleLag = async (count: number, interval: number) => {
      const lags: number[] = [];
      for (let i = 0; i < count; i++, written++) {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * interval));
        const person = people[5 + written]!;
        const title = `lag-${written}-${Date.now()}`;
        await directory.modify(person.dn, [
          { operation: "replace", attribute: "title", values: title },
        ]);
        const started = performance.now();
        for (;;) {
          const found = await db.pool.query(
            `SELECT 1 FROM projection_changes.changes
              WHERE entry_uuid = $1 AND patch::text LIKE $2 LIMIT 1`,
            [uuidOf.get(person.dn.toLowerCase()), `%${title}%`],
          );
          if (found.rowCount) break;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        const lag = performance.now() - started;
        if (lag > 5000) {
          process.stderr.write(
            `bench: capture: write ${written} took ${fmt(lag)} ms (${new Date().toISOString()})\n`,
          );
        }
        lags.push(lag);
      }
      return lags.sort((a, b) => a - b);
    };
    const behind = async () => {
      const statuses = await projector.status();
      return statuses.some((status) => status.lag > 0);
    };
    const schedule = (interval: number) => ({
      source: "accesslog" as const,
      interval,
      reconcileInterval: 600_000,
      snapshotInterval: 0,
      // As annal runs it: periodic snapshots keep pace with every projection.
      paceBy: allProjections.map((projection) => projection.name),
    });

    // a. At once after the import: every projection still has both imports' snapshots to
    // apply, in batches whose transactions each take a while.
    let worker = await startCaptureWorker(context, schedule(DEFAULT_INTERVAL));
    const catchingUp: number[] = [];
    while (catchingUp.length < LAG_SAMPLES && (await behind())) {
      catchingUp.push(...(await sampleLag(1, DEFAULT_INTERVAL)));
    }
    catchingUp.sort((a, b) => a - b);
    for (const projection of allProjections) {
      // Both imports' snapshots: about two minutes per 100,000 entries on this machine.
      await waitForProjection(db.pool, projection.name, importedHead, ENTRIES * 12);
    }
    // b. Every projection caught up, the default interval.
    const settled = await sampleLag(LAG_SAMPLES, DEFAULT_INTERVAL);
    await worker.stop();
    // c. The same with `interval = "1s"`.
    worker = await startCaptureWorker(context, schedule(1000));
    const everySecond = await sampleLag(LAG_SAMPLES / 2, 1000);
    await worker.stop();
    // d. The default interval while periodic snapshots of every entry run beside the passes,
    // one after another (each due a millisecond after the last).
    const periodic = async () =>
      (
        await db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM events
            WHERE type = 'EntrySnapshot' AND data->>'reason' = 'periodic'`,
        )
      ).rows[0]!.n;
    worker = await startCaptureWorker(context, {
      ...schedule(DEFAULT_INTERVAL),
      snapshotInterval: 1,
    });
    while ((await periodic()) === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    const snapshotStarted = performance.now();
    const duringSnapshot = await sampleLag(LAG_SAMPLES / 2, DEFAULT_INTERVAL);
    const snapshotSeconds = (performance.now() - snapshotStarted) / 1000;
    const snapshotted = await periodic();
    await worker.stop();
    await projector.stop();

    // 3. `at` lookups with 1,000,000 events (10,000 entries x 100 versions) against a primary-key lookup.
    await db.pool.query(
      `INSERT INTO events (id, stream_id, stream_version, type, data, occurred_at)
       SELECT gen_random_uuid(), 'entry-bench-' || (g / 100), g % 100 + 1, 'EntryModified',
              jsonb_build_object('attributes', jsonb_build_object('title', jsonb_build_array('v' || g))),
              timestamptz '2026-01-01' + (g % 100) * interval '1 hour'
         FROM generate_series(0, $1 - 1) AS g`,
      [VERSIONS],
    );
    await db.pool.query(
      `INSERT INTO projection_entry_versions.entry_versions
         (entry_uuid, version, valid_from, valid_to, deleted, type, dn, attributes, operational, position)
       SELECT md5('bench' || (g / 100))::uuid, g % 100 + 1,
              timestamptz '2026-01-01' + (g % 100) * interval '1 hour',
              CASE WHEN g % 100 = 99 THEN NULL ELSE timestamptz '2026-01-01' + (g % 100 + 1) * interval '1 hour' END,
              false, 'user', 'uid=u' || (g / 100) || ',ou=people,dc=example,dc=org',
              jsonb_build_object('title', jsonb_build_array('v' || g)), '{}', g
         FROM generate_series(0, $1 - 1) AS g`,
      [VERSIONS],
    );
    await db.pool.query("ANALYZE projection_entry_versions.entry_versions");
    const eventCount = (await db.pool.query("SELECT count(*)::int AS n FROM events")).rows[0]
      .n as number;
    const probe = async (sql: string, params: (i: number) => unknown[]) => {
      const samples: number[] = [];
      for (let i = 0; i < LOOKUPS; i++) {
        const started = performance.now();
        const result = await db.pool.query(sql, params(i));
        samples.push(performance.now() - started);
        if (result.rowCount !== 1) throw new Error("lookup found nothing");
      }
      return samples.sort((a, b) => a - b);
    };
    const entry = (i: number) => `bench${(i * 7919) % (VERSIONS / 100)}`;
    const atLookup = await probe(
      `SELECT attributes FROM projection_entry_versions.entry_versions
        WHERE entry_uuid = md5($1)::uuid AND valid_from <= $2
        ORDER BY valid_from DESC, version DESC LIMIT 1`,
      (i) => [entry(i), new Date(Date.UTC(2026, 0, 1, (i * 31) % 100, 30))],
    );
    const pkLookup = await probe(
      `SELECT attributes FROM projection_entry_versions.entry_versions WHERE entry_uuid = md5($1)::uuid AND version = $2`,
      (i) => [entry(i), ((i * 31) % 100) + 1],
    );

    const ms = (n: number) => fmt(n, 2);
    const markdown = `## Directory capture${LARGE ? `, ${fmt(ENTRIES)} entries` : ""}

Command: \`npm run bench -- capture${sizeOption()}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}; OpenLDAP slapd from Debian, on loopback.

| measure | annal | baseline (same run) | ratio |
|---|---:|---:|---:|
| import of ${fmt(ENTRIES)} entries: \`annal import\` in a process of its own, into a new database (entries/s, median of ${IMPORT_TURNS}: ${importRates.map((rate) => fmt(rate)).join(", ")}) | ${fmt(importRate)} | ${fmt(ldapsearchRate)} (\`ldapsearch -E pr=500\` of the same entries, to /dev/null; median of ${IMPORT_TURNS}: ${ldapsearchSeconds.map((seconds) => fmt(ENTRIES / seconds)).join(", ")}) | ${fmt(importRate / ldapsearchRate, 2)} |
| the first start's import, in the benchmark's process, one page at a time | ${fmt(firstStartImported / firstStartSeconds)} | the same | ${fmt(firstStartImported / firstStartSeconds / ldapsearchRate, 2)} |
| \`at\` lookup p50 / p99 (ms), ${fmt(eventCount)} events in the store | ${ms(percentile(atLookup, 50))} / ${ms(percentile(atLookup, 99))} | ${ms(percentile(pkLookup, 50))} / ${ms(percentile(pkLookup, 99))} (primary-key lookup, same table) | ${fmt(percentile(atLookup, 50) / percentile(pkLookup, 50), 2)} (p50) |

Where the import row's time goes: CPU an entry (µs, ${fmt(importedEntries)} entries a turn, the
mean of the turns) of the client's process (\`annal import\`, or \`ldapsearch\`), of slapd, and
of the rest of the machine (/proc/stat: PostgreSQL for the most part), and the rate the
machine's ${os.cpus().length} cores would allow if that work spread over them perfectly.

| CPU µs an entry | client | slapd | rest of the machine | all | entries/s the cores allow |
|---|---:|---:|---:|---:|---:|
${cpuRow("`annal import`", cpu.import, importedEntries)}
${cpuRow("`ldapsearch -E pr=500` (baseline)", cpu.ldapsearch, importedEntries)}

Capture lag, from a directory write returning to its row in \`changes\`: one write at a time,
each at a random moment within an interval of the last one's capture, ${fmt(ENTRIES)} entries, the
capture worker as annal runs it (in the process that holds capture's lock: a pass every interval, and
one as soon as slapd sends a write on the accesslog search the worker keeps open), the projector
woken by NOTIFY.

| when | interval | writes | p50 (ms) | p99 (ms) | max (ms) |
|---|---:|---:|---:|---:|---:|
${lagRow("while the projections apply both imports' snapshots", DEFAULT_INTERVAL, catchingUp)}
${lagRow("every projection caught up", DEFAULT_INTERVAL, settled)}
${lagRow("every projection caught up", 1000, everySecond)}
${lagRow(`while periodic snapshots run (${fmt(snapshotted)} snapshots recorded in the ${fmt(snapshotSeconds, 0)} s of these writes)`, DEFAULT_INTERVAL, duringSnapshot)}

slapd sends each write's accesslog entry on the search capture keeps open (RFC 4533
\`refreshAndPersist\`, the \`syncprov\` overlay on the accesslog database), which starts the next
pass at once: a change waits for that pass and the projector, not for the interval. Before this
watch, a change waited for the next pass too (at most the interval): p50 156 ms, p99 291 ms at
250 ms, and p50 535 ms, p99 1,555 ms at 1 s (2026-11-26, 100,000 entries).
While the projections catch up, a change also waits for the changes projection to pass every
event before it (the first write waited for the whole backlog: that is the maximum).
The periodic snapshot (and the poll source's reconciliation) read every entry and run beside
the passes, so a change does not wait for them; it shares the machine with them, and with the
projections applying the snapshots. The periodic snapshot keeps pace with the projections
(\`paceByProjections\`: before each page of 100 entries it waits until every projection has
applied its page before last), so a change waits behind at most about two pages of snapshots.
Unpaced, with pages of 500 appended by one COPY each, it outran them: p50 800 ms, p99 2,297 ms
in that row; paced with pages of 500, p50 199 ms, p99 1,505 ms.
While a projection applies a batch, its transaction is marked as a log reader, so it holds
back no other reader of the log; before that mark the first row measured p50 748 ms, p99
1,884 ms with a 100 ms interval.

The import row runs the command an operator runs, \`annal import\` (bin/annal.js, which
leaves the import V8's own heap sizing), in a process of its own and into a new database each
turn, taking turns with the baseline. Its rate is by the command's own report of its time
(\`imported N entries in S s\`): the count of entries it shows progress against, the import,
not the process's start.

\`annal import\` writes two pages at once, each in a transaction of its own: with one, Node
waited on PostgreSQL for 42% of an import. The first start and the periodic snapshots write
one at a time: every snapshot passes through each projection, which bounds the first start
however fast its import writes (and two writers raised the server's memory peak), and two
writers of periodic snapshots held fresh changes back for seconds (5 to 9 s in the last row,
in a run stopped there).

The \`at\` lookup reads \`entry_versions\` (10,000 entries with 100 versions each) exactly as
annal's point-in-time query does: one probe of the (entry_uuid, valid_from) index.`;
    recordResults(LARGE ? `capture-${ENTRIES}` : "capture", markdown);
    process.stdout.write(`${markdown}\n`);
  } finally {
    await db.close();
    await sample.close();
  }
}

/** A paged `ldapsearch` of every entry, written to /dev/null: a C client's full read. */
function pagedLdapsearch(sample: SampleDirectory): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const child = spawn(
      "ldapsearch",
      [
        ...["-x", "-LLL", "-H", sample.url, "-D", SLAPD_ROOT_DN, "-w", sample.password],
        ...["-b", SLAPD_BASE, "-E", "pr=500/noprompt", "*", "+"],
      ],
      { stdio: ["ignore", "ignore", "inherit"] },
    );
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`ldapsearch exited ${code}`)),
    );
  });
}

/**
 * \`annal import\` as an operator runs it (bin/annal.js, its heap settings, its progress), in a
 * process of its own, into a new database: entries a second by its own report of the time it
 * took, which counts the entries first and leaves out the process's start.
 */
async function annalImport(
  sample: SampleDirectory,
): Promise<{ rate: number; entries: number; cpu: RunCpu }> {
  const db = await benchDatabase();
  const dir = mkdtempSync(path.join(os.tmpdir(), "annal-bench-import-"));
  try {
    const config = path.join(dir, "annal.toml");
    writeFileSync(config, sampleDirectoryToml(sample));
    let stdout = "";
    const cpu = await cpuOf(sample, async () => {
      ({ stdout } = await run(process.execPath, ["bin/annal.js", "import", "--config", config], {
        env: { ...process.env, DATABASE_URL: db.url, LDAP_PASSWORD: sample.password },
        maxBuffer: 64 * 1024 * 1024,
      }));
    });
    const report = /imported (\d+) entries in ([\d.]+) s/.exec(stdout);
    if (!report) throw new Error(`annal import said: ${stdout}`);
    const [, entries, seconds] = report;
    if (Number(entries) < ENTRIES) throw new Error(`annal import read ${entries} entries`);
    return { rate: Number(entries) / Number(seconds), entries: Number(entries), cpu };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await db.close();
  }
}

/** CPU ms over a child's run: the child's own, slapd's, and the rest of the machine's. */
interface RunCpu {
  readonly child: number;
  readonly slapd: number;
  /** PostgreSQL for the most part (the benchmark's own process left out). */
  readonly rest: number;
}

async function cpuOf(sample: SampleDirectory, work: () => Promise<void>): Promise<RunCpu> {
  const before = {
    child: endedChildrenCpuMs(),
    slapd: cpuMs(sample.pid),
    self: cpuMs(),
    machine: machineCpuMs(),
  };
  await work();
  const child = endedChildrenCpuMs() - before.child;
  const slapd = cpuMs(sample.pid) - before.slapd;
  const self = cpuMs() - before.self;
  return { child, slapd, rest: restOfMachineMs(before.machine, child + slapd + self) };
}

/** A table row: CPU µs an entry over all the turns, and the rate the machine's cores allow. */
function cpuRow(name: string, runs: readonly RunCpu[], entries: number): string {
  const us = (pick: (run: RunCpu) => number) =>
    (runs.reduce((sum, run) => sum + pick(run), 0) * 1000) / (entries * runs.length);
  const [child, slapd, rest] = [us((r) => r.child), us((r) => r.slapd), us((r) => r.rest)];
  const all = child + slapd + rest;
  return `| ${name} | ${fmt(child)} | ${fmt(slapd)} | ${fmt(rest)} | ${fmt(all)} | ${fmt(rateTheCoresAllow(all / 1000))} |`;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return Number.isInteger(middle)
    ? (sorted[middle - 1]! + sorted[middle]!) / 2
    : sorted[Math.floor(middle)]!;
}

function lagRow(when: string, interval: number, lags: readonly number[]): string {
  if (lags.length === 0) return `| ${when} | ${fmt(interval)} ms | 0 | | | |`;
  const ms = (n: number) => fmt(n, 0);
  return `| ${when} | ${fmt(interval)} ms | ${lags.length} | ${ms(percentile(lags, 50))} | ${ms(percentile(lags, 99))} | ${ms(lags.at(-1)!)} |`;
}
