import { readFileSync, writeFileSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { PerformanceObserver } from "node:perf_hooks";
import { randomBytes } from "node:crypto";
import {
  createNormalizer,
  ensureImported,
  importTimings,
  type CaptureContext,
} from "../src/capture/index.ts";
import { keepHeapSmall } from "../src/cli/heap.ts";
import { BUILT_IN_REDACTED_ATTRIBUTES } from "../src/config/index.ts";
import { createDirectoryClient } from "../src/directory/index.ts";
import { loadDirectorySchema } from "../src/directory/schema.ts";
import { Projector, waitForProjection } from "../src/projector/index.ts";
import {
  baseEntries,
  launchSlapd,
  SLAPD_BASE,
  SLAPD_ROOT_DN,
  toLdifChunks,
} from "../src/slapd/index.ts";
import { EventStore, readHead } from "../src/store/index.ts";
import { allProjections } from "../projections/index.ts";
import { benchDatabase, benchSize, cpuMs, fmt, machine, recordResults } from "./support.ts";

/** Members of the one group (`--size 400k`). */
const MEMBERS = benchSize(100_000);
const MIB = 1024 * 1024;
const quiet = { info() {}, warn() {}, error() {}, debug() {} };

/**
 * The first start over a directory of one group of `MEMBERS` members and nothing else, in
 * this process with annal's heap settings (`keepHeapSmall`), as `annal start` runs it:
 * capture's first import, then the projector until every projection has applied it. What
 * it measures is the memory the one huge entry costs: the peak resident set over the run
 * (`VmHWM`, reset just before), the largest V8 heap and external memory sampled meanwhile,
 * and the share of the process's CPU spent in garbage collection.
 */
export async function oneGroupBenchmark(): Promise<void> {
  keepHeapSmall();
  const password = randomBytes(12).toString("base64url");
  process.stderr.write(`bench: one-group: seeding slapd with a group of ${fmt(MEMBERS)}\n`);
  const slapd = await launchSlapd({
    dir: mkdtempSync(path.join(os.tmpdir(), "annal-bench-slapd-")),
    rootPassword: password,
    seedLdif: () =>
      toLdifChunks([
        ...baseEntries(),
        {
          dn: `cn=everyone,ou=groups,${SLAPD_BASE}`,
          attributes: {
            objectClass: ["groupOfNames"],
            cn: ["everyone"],
            member: Array.from(
              { length: MEMBERS },
              (_, i) => `uid=user${i},ou=people,${SLAPD_BASE}`,
            ),
          },
        },
      ]),
    removeOnStop: true,
    startTimeoutMs: 600_000,
  });
  const directory = createDirectoryClient({
    url: slapd.url,
    bindDN: SLAPD_ROOT_DN,
    password,
    timeoutMs: 120_000,
  });
  const db = await benchDatabase();
  try {
    const { pool } = db;
    const context: CaptureContext = {
      pool,
      store: await EventStore.open(pool),
      directory,
      normalizer: createNormalizer(await loadDirectorySchema(directory), {
        types: [
          { name: "group", base: `ou=groups,${SLAPD_BASE}`, filter: "(objectClass=groupOfNames)" },
        ],
        capture: {
          source: "accesslog",
          interval: 250,
          reconcileInterval: 600_000,
          snapshotInterval: 0,
          redact: [...BUILT_IN_REDACTED_ATTRIBUTES],
        },
      }),
      base: SLAPD_BASE,
      log: quiet,
    };

    let gcMs = 0;
    const gc = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) gcMs += entry.duration;
    });
    gc.observe({ entryTypes: ["gc"] });
    let sampling = true;
    const largest = { heapTotal: 0, heapUsed: 0, external: 0 };
    const sampler = (async () => {
      while (sampling) {
        const usage = process.memoryUsage();
        largest.heapTotal = Math.max(largest.heapTotal, usage.heapTotal);
        largest.heapUsed = Math.max(largest.heapUsed, usage.heapUsed);
        largest.external = Math.max(largest.external, usage.external);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    globalThis.gc?.();
    const atStart = status().rss;
    writeFileSync("/proc/self/clear_refs", "5"); // resets VmHWM to the present resident set
    const cpuBefore = cpuMs();
    const started = performance.now();
    const timings = importTimings();
    await ensureImported(context, "accesslog", { timings });
    const imported = performance.now();
    const importPeak = status().hwm;
    const projector = await Projector.start({ pool, projections: allProjections, log: quiet });
    const head = await readHead(pool);
    for (const projection of allProjections) {
      await waitForProjection(pool, projection.name, head, 3_600_000);
    }
    const done = performance.now();
    await projector.stop();
    sampling = false;
    await sampler;
    gc.disconnect();
    const cpu = cpuMs() - cpuBefore;
    const peak = status().hwm;

    const members = await pool.query<{ n: string }>(
      `SELECT jsonb_array_length(data->'state'->'attributes'->'member')::text AS n FROM events
        WHERE type = 'EntrySnapshot' AND data->'state'->>'dn' LIKE 'cn=everyone,%'`,
    );
    if (Number(members.rows[0]?.n) !== MEMBERS) {
      throw new Error(`the group's snapshot holds ${members.rows[0]?.n} members of ${MEMBERS}`);
    }
    const mib = (bytes: number) => fmt(bytes / MIB);
    recordResults(
      `memory-one-group`,
      `## Memory of one huge entry: a first start over one group of ${fmt(MEMBERS)} members

Command: \`npm run bench -- one-group --size ${MEMBERS}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}; OpenLDAP slapd from Debian, on loopback. Load average at the end:
${os
  .loadavg()
  .map((load) => fmt(load, 1))
  .join(", ")}.

The first start (capture's first import, then every projection's bulk build) over a
directory of that one group and nothing else, in the benchmark's own process with annal's heap
settings (src/cli/heap.ts). Resident set from \`/proc/self/status\`: \`VmHWM\` reset just
before the import; heap and external memory sampled every 20 ms; GC from perf_hooks' \`gc\`
entries against the process's CPU over the run.

| measure | value |
| --- | ---: |
| resident set before (MiB) | ${mib(atStart)} |
| peak resident set, import (MiB) | ${mib(importPeak)} |
| peak resident set, whole first start (MiB) | ${mib(peak)} |
| largest V8 heap: total / used (MiB) | ${mib(largest.heapTotal)} / ${mib(largest.heapUsed)} |
| largest external (MiB) | ${mib(largest.external)} |
| import / projections (s) | ${fmt((imported - started) / 1000, 1)} / ${fmt((done - imported) / 1000, 1)} |
| GC / CPU of the process (ms) | ${fmt(gcMs)} / ${fmt(cpu)} (${fmt((100 * gcMs) / cpu)}%) |
`,
    );
  } finally {
    await db.close();
    await directory.close();
    await slapd.stop();
  }
}

/** The process's resident set now and its peak since the last reset, in bytes. */
function status(): { rss: number; hwm: number } {
  const text = readFileSync("/proc/self/status", "utf8");
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)![1]);
  return { rss: kib("VmRSS") * 1024, hwm: kib("VmHWM") * 1024 };
}
