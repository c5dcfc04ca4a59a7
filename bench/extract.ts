import {
  createWriteStream,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import { pipeline } from "node:stream/promises";
import os from "node:os";
import v8 from "node:v8";
import { runInNewContext } from "node:vm";
import path from "node:path";
import { pino } from "pino";
import { to as copyTo } from "pg-copy-streams";
import { extractToFolder } from "../src/extract/index.ts";
import { encodingThreadHeap } from "../src/extract/parquet-thread.ts";
import { Projector } from "../src/projector/index.ts";
import { allProjections } from "../projections/index.ts";
import { ENTRY_VERSIONS } from "../projections/entry-versions/index.ts";
import {
  benchDatabase,
  benchSize,
  fmt,
  machine,
  recordResults,
  sizeOption,
  time,
} from "./support.ts";

/**
 * `npm run bench -- extract [--size 100k]`: `annal extract`'s entry versions (the largest
 * table: a year of changes, one version a month for each entry, `--size` entries, 20,000 by
 * default) against PostgreSQL's `COPY (SELECT the same rows) TO STDOUT (FORMAT csv)` into a
 * file, in the same run on the same database; and the extract's memory, sampled every 2 s,
 * at a quarter of the size and at the size, to show it does not grow with the rows.
 *
 * The versions are made by PostgreSQL (`INSERT … SELECT` from `generate_series`, 50,000
 * entries a statement) with the readers' indexes of the table dropped first (neither the
 * extract nor `COPY` reads them; only the primary key is kept up), so that a large size
 * seeds without keeping three more indexes up row by row.
 */
const ENTRIES = benchSize(20_000);
const MONTHS = 12;
/** How often the memory runs collect and sample. */
const MEMORY_SAMPLE_MS = 2_000;
/** Turns of the extract and COPY in the throughput's measure. */
const ROUNDS = 3;

type Timed = { seconds: number; cpu: number; database: number };

/** The run of `runs` with the median wall time. */
function median(runs: readonly Timed[]): Timed {
  return [...runs].sort((a, b) => a.seconds - b.seconds)[Math.floor(runs.length / 2)]!;
}

async function seedVersions(
  pool: Awaited<ReturnType<typeof benchDatabase>>["pool"],
  entries: number,
  first = 1,
) {
  const yearAgo = new Date(Date.now() - 365 * 86_400_000);
  const indexes = await pool.query<{ name: string }>(
    `SELECT indexrelid::regclass::text AS name FROM pg_index
      WHERE indrelid = '${ENTRY_VERSIONS}'::regclass AND NOT indisprimary`,
  );
  for (const { name } of indexes.rows) await pool.query(`DROP INDEX ${name}`);
  // One version a month: the title and description change each month, the rest stays; the
  // last version is open. Seeded in slices, so a large size does not need one huge statement.
  const slice = 50_000;
  for (let from = first; from <= entries; from += slice) {
    const to = Math.min(entries, from + slice - 1);
    await pool.query(
      `INSERT INTO ${ENTRY_VERSIONS}
         (entry_uuid, version, valid_from, valid_to, deleted, type, dn, attributes, operational, position, created_position)
       SELECT md5('entry' || g)::uuid, m, $1::timestamptz + (m - 1) * interval '1 month',
              CASE WHEN m < $2 THEN $1::timestamptz + m * interval '1 month' END, false, 'user',
              'uid=user' || g || ',ou=people,dc=example,dc=org',
              jsonb_build_object(
                'objectClass', jsonb_build_array('top', 'person', 'organizationalPerson', 'inetOrgPerson'),
                'uid', jsonb_build_array('user' || g),
                'cn', jsonb_build_array('User ' || g),
                'sn', jsonb_build_array('Number ' || g),
                'mail', jsonb_build_array('user' || g || '@example.org'),
                'telephoneNumber', jsonb_build_array('+49 30 ' || g, '+49 170 ' || g),
                'title', jsonb_build_array('Title ' || m || '-' || (g % 7)),
                'description', jsonb_build_array('Month ' || m)),
              jsonb_build_object('entryUUID', jsonb_build_array(md5('entry' || g)::uuid::text)),
              g::bigint * $2 + m, g::bigint * $2 + 1
         FROM generate_series($3::int, $4::int) AS g CROSS JOIN generate_series(1, $2) AS m`,
      [yearAgo, MONTHS, from, to],
    );
  }
  await pool.query(`ANALYZE ${ENTRY_VERSIONS}`);
}

function folderBytes(dir: string): number {
  let bytes = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) bytes += statSync(path.join(entry.parentPath, entry.name)).size;
  }
  return bytes;
}

type Pool = Awaited<ReturnType<typeof benchDatabase>>["pool"];

/**
 * CPU seconds of the database's backends (this database's, from /proc: the server is on this
 * machine), by process id: what PostgreSQL spent, beside this process's own.
 */
async function backendCpu(pool: Pool): Promise<Map<number, number>> {
  const pids = await pool.query<{ pid: number }>(
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database()",
  );
  const seconds = new Map<number, number>();
  for (const { pid } of pids.rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
      seconds.set(pid, (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // a server elsewhere (DATABASE_URL), or a backend gone: not counted
    }
  }
  return seconds;
}

/** `work`'s wall seconds, this process's CPU seconds (every thread) and the backends'. */
async function timed(
  pool: Pool,
  work: () => Promise<unknown>,
): Promise<{ seconds: number; cpu: number; database: number }> {
  const before = await backendCpu(pool);
  const cpu = process.cpuUsage();
  const seconds = await time(work);
  const used = process.cpuUsage(cpu);
  let database = 0;
  for (const [pid, after] of await backendCpu(pool)) database += after - (before.get(pid) ?? 0);
  return { seconds, cpu: (used.user + used.system) / 1e6, database };
}

/** V8's `gc()`, exposed at run time (the benchmark runs without `--expose-gc`). */
function exposedGc(): () => void {
  v8.setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/**
 * Peak live heap and resident set (MiB) while `work` runs: every `everyMs` a full collection,
 * then the heap in use, so the figure is what the extract holds, not garbage V8 has not yet
 * collected (it lets garbage grow far on a machine with memory to spare).
 */
async function peakMemory(
  work: () => Promise<unknown>,
  everyMs: number,
): Promise<{ heap: number; thread: number; rss: number }> {
  const gc = exposedGc();
  let heap = 0;
  let thread = 0;
  let rss = 0;
  const sample = () => {
    gc();
    const usage = process.memoryUsage();
    heap = Math.max(heap, usage.heapUsed);
    rss = Math.max(rss, usage.rss);
    void encodingThreadHeap().then((used) => (thread = Math.max(thread, used)));
  };
  const timer = setInterval(sample, everyMs);
  try {
    await work();
  } finally {
    clearInterval(timer);
    sample();
  }
  return { heap: heap / 2 ** 20, thread: thread / 2 ** 20, rss: rss / 2 ** 20 };
}

export async function extractBenchmark(): Promise<void> {
  const db = await benchDatabase();
  const { pool } = db;
  const scratch = mkdtempSync(path.join(os.tmpdir(), "annal-bench-extract-"));
  try {
    const projector = await Projector.start({
      pool,
      projections: allProjections,
      log: pino({ level: "silent" }),
    });
    await projector.stop(); // the tables exist; the rows come straight from here
    const sizes = [Math.max(1, Math.floor(ENTRIES / 4)), ENTRIES];
    const rows: string[] = [];
    let seeded = 0;
    let full:
      | {
          extract: Timed;
          copy: Timed;
          extracts: Timed[];
          copies: Timed[];
          bytes: number;
          copyBytes: number;
          rows: number;
          loads: number[];
        }
      | undefined;
    const seeding: string[] = [];
    for (const entries of sizes) {
      process.stderr.write(
        `bench: extract: seeding to ${fmt(entries)} entries, ${MONTHS} versions each\n`,
      );
      const seedSeconds = await time(() => seedVersionsFrom(pool, seeded, entries));
      seeding.push(`${fmt(entries * MONTHS)} versions in ${fmt(seedSeconds, 1)} s`);
      seeded = entries;
      const versions = entries * MONTHS;
      exposedGc()();
      const before = process.memoryUsage();
      const dir = path.join(scratch, `extract-${entries}`);
      let gcSeconds = 0;
      const peak = await peakMemory(async () => {
        gcSeconds = await time(() => extractToFolder(pool, { dir, tables: ["entry_versions"] }));
      }, MEMORY_SAMPLE_MS);
      rmSync(dir, { recursive: true, force: true });
      rows.push(
        `| ${fmt(versions)} | ${fmt(versions / gcSeconds)} | ${fmt(before.heapUsed / 2 ** 20)} | ${fmt(peak.heap)} | ${fmt(peak.thread)} | ${fmt(before.rss / 2 ** 20)} | ${fmt(peak.rss)} |`,
      );
      // The throughput is measured in runs of their own, without the collections: the
      // extract and COPY taking turns, ROUNDS times, each's median (a busy machine's load
      // changes from minute to minute).
      if (entries === ENTRIES) {
        const extracts: Timed[] = [];
        const copies: Timed[] = [];
        let bytes = 0;
        let copyBytes = 0;
        const loads = [os.loadavg()[0]!];
        for (let round = 0; round < ROUNDS; round++) {
          rmSync(dir, { recursive: true, force: true });
          extracts.push(
            await timed(pool, () => extractToFolder(pool, { dir, tables: ["entry_versions"] })),
          );
          bytes = folderBytes(dir);
          const csv = path.join(scratch, "copy.csv");
          const client = await pool.connect();
          try {
            copies.push(
              await timed(pool, () =>
                pipeline(
                  client.query(
                    copyTo(`COPY (SELECT v.entry_uuid, v.version, v.dn, v.type, v.valid_from, v.valid_to,
                                         v.position, v.attributes, v.operational
                                    FROM ${ENTRY_VERSIONS} AS v WHERE NOT v.deleted
                                   ORDER BY v.entry_uuid, v.version) TO STDOUT (FORMAT csv)`),
                  ),
                  createWriteStream(csv),
                ),
              ),
            );
          } finally {
            client.release();
          }
          copyBytes = statSync(csv).size;
          rmSync(csv, { force: true });
          loads.push(os.loadavg()[0]!);
        }
        full = {
          extract: median(extracts),
          copy: median(copies),
          extracts,
          copies,
          bytes,
          copyBytes,
          rows: versions,
          loads,
        };
      }
      rmSync(dir, { recursive: true, force: true });
    }
    const f = full!;
    recordResults(
      "extract",
      `## Parquet extracts: entry versions, ${fmt(ENTRIES)} entries with a year of changes

Command: \`npm run bench -- extract${sizeOption()}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}

**Measured on a shared machine** (other engineers' builds and tests running on its 2 cores):
the figures are indicative, to be measured again on a quiet machine.

### Throughput, ${fmt(f.rows)} versions (one a month for each entry; 9 attributes)

The extract and \`COPY\` take turns ${ROUNDS} times; each row is the turn of median wall time. Load
average (1 minute) before the first turn and after each: ${f.loads.map((load) => fmt(load, 1)).join(", ")}.

| what | seconds | rows/s | size MiB | CPU s, this process | CPU s, PostgreSQL | ratio to \`COPY\` |
| ---- | ------: | -----: | -------: | ------------------: | ----------------: | ---------------: |
| \`extractToFolder\`, \`entry_versions\` (Parquet, Snappy, statistics) | ${fmt(f.extract.seconds, 1)} | ${fmt(f.rows / f.extract.seconds)} | ${fmt(f.bytes / 2 ** 20, 1)} | ${fmt(f.extract.cpu, 1)} | ${fmt(f.extract.database, 1)} | ${fmt(f.copy.seconds / f.extract.seconds, 2)} |
| \`COPY (SELECT …) TO STDOUT (FORMAT csv)\` into a file | ${fmt(f.copy.seconds, 1)} | ${fmt(f.rows / f.copy.seconds)} | ${fmt(f.copyBytes / 2 ** 20, 1)} | ${fmt(f.copy.cpu, 1)} | ${fmt(f.copy.database, 1)} | |

Every turn, wall s / CPU s this process / CPU s PostgreSQL: the extract ${f.extracts.map((r) => `${fmt(r.seconds, 1)}/${fmt(r.cpu, 1)}/${fmt(r.database, 1)}`).join(", ")}; \`COPY\` ${f.copies.map((r) => `${fmt(r.seconds, 1)}/${fmt(r.cpu, 1)}/${fmt(r.database, 1)}`).join(", ")}.
Seeding: ${seeding.join("; then ")}.

The extract reads the versions in \`(entry_uuid, version)\` order with \`COPY (SELECT …) TO
STDOUT\` (text), 10,000 rows a batch, column by column (src/extract/copy-rows.ts,
columns.ts): no object a row; the query writes each column in the form it is read (a time as
its milliseconds, an attribute with a column of its own from the version's JSON, the rest of
the attributes and the operational ones as JSON text, which goes into the file as it is). The
batch crosses to the encoding thread (src/extract/parquet-thread.ts) in typed arrays and one
UTF-8 buffer a text column, transferred, and is encoded there as one row group while the next
batch is read; a column of repeated strings gets a dictionary of the strings. The benchmark
gives no directory schema: each attribute is a list of strings. \`COPY\` selects the same rows
and columns in the same order and writes PostgreSQL's CSV. The goal of issue 56 is a ratio of
0.5 or more: ${f.copy.seconds / f.extract.seconds >= 0.5 ? "met" : "not met"} here by wall time. By CPU (this process and PostgreSQL's backends, which
a busy machine shares out): ${fmt((f.copy.cpu + f.copy.database) / (f.extract.cpu + f.extract.database), 2)}.

### Memory while extracting (this process, MiB)

| versions | rows/s | heap before | heap peak | encoding thread's heap peak | resident before | resident peak |
| -------: | -----: | ----------: | --------: | --------------------------: | --------------: | ------------: |
${rows.join("\n")}

The heap is measured live, in runs of their own: a full collection every ${MEMORY_SAMPLE_MS / 1000} s, then the
heap in use (the collections slow these runs: their rows/s are not the throughput above, which
is measured in a run without them). The encoding thread's heap is its heap in use at the same
moments, garbage not yet collected included (it is not collected from here); the resident set
is the whole process's, both threads. The peaks do not grow with the rows: a run holds two
batches of rows at most (one read and converted, one being encoded) and one row group's bytes.
`,
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    await db.close();
  }
}

/** Seeds the entries numbered after `from` up to `to`. */
async function seedVersionsFrom(
  pool: Awaited<ReturnType<typeof benchDatabase>>["pool"],
  from: number,
  to: number,
) {
  if (to <= from) return;
  await seedVersions(pool, to, from + 1);
}
