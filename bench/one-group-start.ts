/**
 * The measured part of `npm run bench -- one-group`, in a process of its own so that seeding
 * the directory leaves nothing in its heap: the first start (capture's first import, then the
 * projector until every projection has applied it) against the directory and database named
 * by `LDAP_URL`, `LDAP_PASSWORD` and `DATABASE_URL`, with annal's heap settings unless
 * `ONE_GROUP_HEAP=v8`. Prints one line of JSON: the resident set before, its peaks, the
 * largest heap and external memory sampled meanwhile, GC time and CPU time.
 */
import { readFileSync } from "node:fs";
import { PerformanceObserver } from "node:perf_hooks";
import { createNormalizer, ensureImported, type CaptureContext } from "../src/capture/index.ts";
import { keepHeapSmall } from "../src/cli/heap.ts";
import { BUILT_IN_REDACTED_ATTRIBUTES } from "../src/config/index.ts";
import { createPool } from "../src/db/index.ts";
import { createDirectoryClient } from "../src/directory/index.ts";
import { loadDirectorySchema } from "../src/directory/schema.ts";
import { Projector, waitForProjection } from "../src/projector/index.ts";
import { SLAPD_BASE, SLAPD_ROOT_DN } from "../src/slapd/index.ts";
import { EventStore, readHead } from "../src/store/index.ts";
import { allProjections } from "../projections/index.ts";

if (process.env.ONE_GROUP_HEAP !== "v8") keepHeapSmall();
const quiet = { info() {}, warn() {}, error() {}, debug() {} };
const pool = createPool(process.env.DATABASE_URL!, 10);
const directory = createDirectoryClient({
  url: process.env.LDAP_URL!,
  bindDN: SLAPD_ROOT_DN,
  password: process.env.LDAP_PASSWORD!,
  timeoutMs: 120_000,
});
const context: CaptureContext = {
  pool,
  store: await EventStore.open(pool),
  directory,
  normalizer: createNormalizer(await loadDirectorySchema(directory), {
    types: [
      { name: "user", base: `ou=people,${SLAPD_BASE}`, filter: "(objectClass=inetOrgPerson)" },
      { name: "group", base: `ou=groups,${SLAPD_BASE}`, filter: "(objectClass=groupOfNames)" },
    ],
    capture: { redact: [...BUILT_IN_REDACTED_ATTRIBUTES] },
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
const before = status().rss;
const cpuBefore = process.cpuUsage();
const started = performance.now();
await ensureImported(context, "accesslog");
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
const cpu = process.cpuUsage(cpuBefore);
process.stdout.write(
  `${JSON.stringify({
    before,
    importPeak,
    peak: status().hwm,
    ...largest,
    importMs: imported - started,
    projectMs: done - imported,
    gcMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
  })}\n`,
);
await directory.close();
await pool.end();

/** The process's resident set now and its peak so far, in bytes. */
function status(): { rss: number; hwm: number } {
  const text = readFileSync("/proc/self/status", "utf8");
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)![1]);
  return { rss: kib("VmRSS") * 1024, hwm: kib("VmHWM") * 1024 };
}
