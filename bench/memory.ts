import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createToken } from "../src/auth/index.ts";
import { readCaptureCheckpoint } from "../src/capture/index.ts";
import { waitForProjection } from "../src/projector/index.ts";
import { EventStore, readHead } from "../src/store/index.ts";
import { allProjections } from "../projections/index.ts";
import {
  readersIndexesBuilt,
  startAnnalProcess,
  until,
  type AnnalProcess,
} from "./annal-process.ts";
import {
  benchDatabase,
  benchSize,
  cpuMs,
  fmt,
  machine,
  percentile,
  recordResults,
  sampleDirectory,
  sizeOption,
} from "./support.ts";

/**
 * The server's memory over a day's work on a directory of 100,000 people: `annal start` as
 * a process of its own, its first-start import of every entry, REST searches, a CSV export
 * of every person, and directory writes captured. Its resident set is read from
 * `/proc/<pid>/status` (`VmRSS` every 100 ms, and the kernel's own peak, `VmHWM`). The
 * baseline is the same process's resident set once it answers `/healthz`, before its work.
 */
const ENTRIES = benchSize(100_000);
const LARGE = ENTRIES !== 100_000;
const SEARCHES = 300;
const WRITES = 100;
/** Issue 41's goal for the peak resident set, at 100,000 entries and at 1,000,000. */
const TARGET_MIB = 250;
const MIB = 1024 * 1024;

export async function memoryBenchmark(): Promise<void> {
  const sample = await sampleDirectory("memory", ENTRIES);
  const { people, client: directory } = sample;
  const dir = mkdtempSync(path.join(os.tmpdir(), "annal-bench-memory-"));
  const db = await benchDatabase();
  let server: AnnalProcess | undefined;
  try {
    const store = await EventStore.open(db.pool);
    const { token } = await createToken(db.pool, store, {
      name: "bench",
      access: ["read", "export"],
    });
    const spawned = performance.now();
    // The export below is of every person: more than the default 1,000,000 rows at that size.
    server = await startAnnalProcess({ sample, db, dir, toml: "[rest.export]\nmaxRows = 0" });
    const { pid, ended, log: serverLog, base } = server;
    const authorization = `Bearer ${token}`;
    await server.healthy;
    const healthy = (performance.now() - spawned) / 1000;
    const atStart = status(pid).rss;
    const gcBefore = await gcSeconds(base);
    const cpuBefore = cpuMs(pid);

    let sampling = true;
    const phases: { name: string; peak: number; seconds: number; heap: Heap }[] = [];
    let phasePeak = 0;
    let phaseHeap: Heap = { total: 0, used: 0, external: 0 };
    const sampler = (async () => {
      for (let tick = 0; sampling; tick++) {
        const resident = residentNow(pid);
        if (resident === 0) break; // the server ended: the phase's race with `ended` reports it
        phasePeak = Math.max(phasePeak, resident);
        // V8's heap from the server's own /metrics, once a second: the largest seen in a phase.
        if (tick % 10 === 0) {
          const heap = await heapOf(base);
          if (heap && heap.total > phaseHeap.total) phaseHeap = heap;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const phase = async (name: string, work: () => Promise<void>) => {
      process.stderr.write(`bench: memory: ${name}\n`);
      phasePeak = status(pid).rss;
      phaseHeap = { total: 0, used: 0, external: 0 };
      const started = performance.now();
      await Promise.race([work(), ended]);
      const done = {
        name,
        peak: Math.max(phasePeak, status(pid).rss),
        seconds: (performance.now() - started) / 1000,
        heap: phaseHeap,
      };
      phases.push(done);
      process.stderr.write(
        `bench: memory: ${name}: ${fmt(done.seconds, 1)} s, peak ${fmt(done.peak / MIB)} MiB, ` +
          `VmHWM ${fmt(status(pid).hwm / MIB)} MiB\n`,
      );
    };
    const searchMs: number[][] = [[], [], []];

    // The first start's moments, in seconds from the process's spawn: the import committed,
    // the REST channel serving every user, a write made as soon as the import committed
    // found by a REST search, every projection at the head, the readers' indexes built.
    const moments: { what: string; seconds: number }[] = [];
    // Each also to stderr as it comes: a run that fails later still shows them.
    const moment = (what: string) => {
      const seconds = (performance.now() - spawned) / 1000;
      moments.push({ what, seconds });
      process.stderr.write(`bench: memory: ${fmt(seconds, 1)} s: ${what}\n`);
    };
    await phase(`first-start import of ${fmt(ENTRIES)} entries, projected`, async () => {
      await until(async () => (await readCaptureCheckpoint(db.pool, "accesslog")) !== undefined);
      moment("the import committed (capture's checkpoint written)");
      const marker = `first-later-write-${Date.now()}`;
      await directory.modify(people[0]!.dn, [
        { operation: "replace", attribute: "title", values: marker },
      ]);
      const rest = async (query: string) => {
        const response = await fetch(`${base}/api/entries/users?${query}`, {
          headers: { authorization },
        }).catch(() => undefined);
        return response?.ok
          ? ((await response.json()) as { count?: number; nodes?: unknown[] })
          : undefined;
      };
      const serving = until(
        async () => (await rest("include=count"))?.count === people.length,
      ).then(() => moment("the REST channel serves every user (`include=count`)"));
      const written = until(
        async () =>
          (await rest(`filter=${encodeURIComponent(`title eq "${marker}"`)}`))?.nodes?.length === 1,
      ).then(() => moment("a write made then is found by a REST search"));
      const head = await readHead(db.pool);
      for (const projection of allProjections) {
        await waitForProjection(db.pool, projection.name, head, 3_600_000);
      }
      moment("every projection at the head");
      await Promise.all([serving, written]);
      // The readers' indexes dropped for the bulk load are built after it, while the channel
      // serves: the searches below are measured once they are all there (the server logs each).
      await until(async () => readersIndexesBuilt(serverLog));
      moment("the readers' indexes built");
    });
    await phase(`${fmt(SEARCHES)} REST searches`, async () => {
      const filters = [
        (i: number) => `uid eq "${uidOf(people[(i * 7919) % people.length]!.dn)}"`,
        () => `sn eq "Meyer"`,
        (i: number) => `cn sw "${uidOf(people[i % people.length]!.dn).slice(0, 3)}"`,
      ];
      for (let i = 0; i < SEARCHES; i++) {
        const filter = encodeURIComponent(filters[i % filters.length]!(i));
        const started = performance.now();
        const response = await fetch(
          `${base}/api/entries/users?filter=${filter}&sort=sn,cn&first=50`,
          { headers: { authorization } },
        );
        if (!response.ok) throw new Error(`search answered ${response.status}`);
        await response.arrayBuffer();
        searchMs[i % filters.length]!.push(performance.now() - started);
      }
    });
    await phase(`CSV export of every person`, async () => {
      const response = await fetch(
        `${base}/api/entries/users?fields=cn,sn,mail,title,uidNumber&filename=users.csv`,
        { headers: { authorization } },
      );
      if (!response.ok || !response.body) {
        throw new Error(`export answered ${response.status}: ${await response.text()}`);
      }
      for await (const chunk of response.body) void chunk;
    });
    await phase(`${fmt(WRITES)} directory writes captured`, async () => {
      const titles: string[] = [];
      for (let i = 0; i < WRITES; i++) {
        const title = `memory-${i}-${Date.now()}`;
        titles.push(title);
        await directory.modify(people[i]!.dn, [
          { operation: "replace", attribute: "title", values: title },
        ]);
      }
      await until(async () => {
        const found = await db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM projection_changes.changes
            WHERE patch::text LIKE ANY($1::text[])`,
          [titles.map((title) => `%${title}%`)],
        );
        return found.rows[0]!.n >= WRITES;
      });
    });
    sampling = false;
    await sampler;
    const { hwm } = status(pid);
    const gcMs = ((await gcSeconds(base)) - gcBefore) * 1000;
    const serverCpuMs = cpuMs(pid) - cpuBefore;
    const reads = await batchReads(base);

    const mib = (bytes: number) => fmt(bytes / MIB);
    const markdown = `## Server memory${LARGE ? `, ${fmt(ENTRIES)} entries` : ""}

Command: \`npm run bench -- memory${sizeOption()}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}; OpenLDAP slapd from Debian, on loopback.

\`annal start\` (bin/annal.js, with its V8 heap settings: src/cli/heap.ts) as a process of its
own (\`NODE_ENV=production\`, the default settings) over a
directory of ${fmt(ENTRIES)} people, doing one thing after another. Resident set of the server
process, MiB: sampled every 100 ms (\`VmRSS\`), and the kernel's peak over the whole run
(\`VmHWM\`); the baseline is the same process when it first answers \`/healthz\`.

| phase | seconds | peak RSS (MiB) | largest V8 heap: total / used (MiB) | external (MiB) |
|---|---:|---:|---:|---:|
${phases
  .map(
    (p) =>
      `| ${p.name} | ${fmt(p.seconds, 1)} | ${mib(p.peak)} | ${mib(p.heap.total)} / ${mib(p.heap.used)} | ${mib(p.heap.external)} |`,
  )
  .join("\n")}

The heap columns come from the server's \`/metrics\` (\`nodejs_heap_size_total_bytes\`,
\`…_used_bytes\`, \`nodejs_external_memory_bytes\`), read once a second; the row with the
largest total in the phase. The resident set beyond the heap is code, the
allocator's free pages and buffers.

| measure | annal | baseline (same run) | ratio |
|---|---:|---:|---:|
| peak resident set, whole run (\`VmHWM\`, MiB) | ${mib(hwm)} | ${mib(atStart)} (at start) | ${fmt(hwm / atStart, 2)} |

Target: under ${TARGET_MIB} MiB; ${hwm / MIB < TARGET_MIB ? "met" : "not met"}.

The first start, seconds from the process's spawn (it answered \`/healthz\` after ${fmt(healthy, 1)} s):

| moment | seconds |
|---|---:|
${moments.map((m) => `| ${m.what} | ${fmt(m.seconds, 1)} |`).join("\n")}

Garbage collection over the run: ${fmt(gcMs / 1000, 1)} s of the server's ${fmt(serverCpuMs / 1000, 1)} s of CPU
(${fmt((100 * gcMs) / serverCpuMs)}%; \`nodejs_gc_duration_seconds\` from its \`/metrics\`, CPU from
\`/proc/<pid>/stat\`).

Batches of the log the projections applied over the run: ${fmt(reads.database)} read from the
database, ${fmt(reads.shared)} shared from another projection's read of the same batch
(\`annal_projector_batch_reads_total\`).

The searches, each \`sort=sn,cn&first=50\` over HTTP with a bearer token, p50 / p99 (ms):
${["`uid eq` one person", '`sn eq "Meyer"`', "`cn sw` three letters"]
  .map((what, k) => {
    const sorted = searchMs[k]!.sort((a, b) => a - b);
    return `${what} ${fmt(percentile(sorted, 50), 1)} / ${fmt(percentile(sorted, 99), 1)}`;
  })
  .join("; ")}.`;
    recordResults(LARGE ? `memory-${ENTRIES}` : "memory", markdown);
    process.stdout.write(`${markdown}\n`);
  } finally {
    await server?.stop();
    await db.close();
    await sample.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Heap {
  readonly total: number;
  readonly used: number;
  readonly external: number;
}

/**
 * The server's Prometheus metrics (`GET /metrics`) as a lookup of one sample by its name and
 * labels as written (`annal_x{source="shared"}`); undefined when the server does not answer.
 */
async function scrapeMetrics(base: string): Promise<((sample: string) => number) | undefined> {
  const response = await fetch(`${base}/metrics`).catch(() => undefined);
  if (!response?.ok) return undefined;
  const samples = new Map<string, number>();
  for (const line of (await response.text()).split("\n")) {
    if (line.startsWith("#")) continue;
    const space = line.lastIndexOf(" ");
    if (space > 0) samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return (sample) => samples.get(sample) ?? 0;
}

/** The server's time in garbage collection so far, every kind, in seconds. */
async function gcSeconds(base: string): Promise<number> {
  const response = await fetch(`${base}/metrics`);
  let seconds = 0;
  for (const line of (await response.text()).split("\n")) {
    if (!line.startsWith("annal_nodejs_gc_duration_seconds_sum")) continue;
    seconds += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return seconds;
}

/** The V8 heap of the server; undefined when it does not answer. */
async function heapOf(base: string): Promise<Heap | undefined> {
  const metric = await scrapeMetrics(base);
  if (!metric) return undefined;
  return {
    total: metric("annal_nodejs_heap_size_total_bytes"),
    used: metric("annal_nodejs_heap_size_used_bytes"),
    external: metric("annal_nodejs_external_memory_bytes"),
  };
}

/** The server's count of the log batches its projections read and shared. */
async function batchReads(base: string): Promise<{ database: number; shared: number }> {
  const metric = await scrapeMetrics(base);
  const count = (source: string) =>
    metric?.(`annal_projector_batch_reads_total{source="${source}"}`) ?? 0;
  return { database: count("database"), shared: count("shared") };
}

/** `VmRSS` and `VmHWM` of a process, in bytes. */
function status(pid: number): { rss: number; hwm: number } {
  const text = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(text)?.[1]);
  return { rss: kib("VmRSS") * 1024, hwm: kib("VmHWM") * 1024 };
}

/** `VmRSS` of a process that may have just ended (0 once it has). */
function residentNow(pid: number): number {
  try {
    return status(pid).rss;
  } catch {
    return 0;
  }
}

const uidOf = (dn: string) => dn.slice(4, dn.indexOf(","));
