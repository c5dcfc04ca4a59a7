import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { baseEntries, launchSlapd, SLAPD_BASE, toLdifChunks } from "../src/slapd/index.ts";
import { benchDatabase, benchSize, fmt, machine, recordResults } from "./support.ts";

/** Members of the one group (`--size 400k`). */
const MEMBERS = benchSize(100_000);
/**
 * People beside the group, so that the import is a run of first snapshots longer than the
 * projector's batch, which it builds in bulk, as a real directory's first start.
 */
const PEOPLE = 2_000;
const MIB = 1024 * 1024;

/** What bench/one-group-start.ts measures (bytes and milliseconds). */
interface Measured {
  before: number;
  importPeak: number;
  peak: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  importMs: number;
  projectMs: number;
  gcMs: number;
  cpuMs: number;
}

/**
 * The first start over a directory of one group of `MEMBERS` members (and a few people), as
 * `annal start` runs it: capture's first import, then the projector until every projection
 * has applied it, in a process of its own (bench/one-group-start.ts) so that seeding the
 * directory here leaves nothing in its heap. What it measures is the memory the one huge
 * entry costs: the peak resident set, the largest V8 heap and external memory, and the share
 * of the process's CPU spent in garbage collection; `--v8-heap` runs it without annal's heap
 * settings (src/cli/heap.ts).
 */
export async function oneGroupBenchmark(): Promise<void> {
  const heap = process.argv.includes("--v8-heap") ? "v8" : "annal";
  const password = randomBytes(12).toString("base64url");
  process.stderr.write(`bench: one-group: seeding slapd with a group of ${fmt(MEMBERS)}\n`);
  const slapd = await launchSlapd({
    dir: mkdtempSync(path.join(os.tmpdir(), "annal-bench-slapd-")),
    rootPassword: password,
    seedLdif: () =>
      toLdifChunks([
        ...baseEntries(),
        ...Array.from({ length: PEOPLE }, (_, i) => ({
          dn: `uid=user${i},ou=people,${SLAPD_BASE}`,
          attributes: {
            objectClass: ["inetOrgPerson"],
            uid: [`user${i}`],
            cn: [`User ${i}`],
            sn: [`Number${i}`],
          },
        })),
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
  const db = await benchDatabase();
  try {
    process.stderr.write(`bench: one-group: the first start (heap settings: ${heap})\n`);
    const m = await firstStartAlone({
      ...process.env,
      DATABASE_URL: db.url,
      LDAP_URL: slapd.url,
      LDAP_PASSWORD: password,
      ONE_GROUP_HEAP: heap,
    });
    const members = await db.pool.query<{ n: string }>(
      `SELECT jsonb_array_length(data->'state'->'attributes'->'member')::text AS n FROM events
        WHERE type = 'EntrySnapshot' AND data->'state'->>'dn' LIKE 'cn=everyone,%'`,
    );
    if (Number(members.rows[0]?.n) !== MEMBERS) {
      throw new Error(`the group's snapshot holds ${members.rows[0]?.n} members of ${MEMBERS}`);
    }
    const mib = (bytes: number) => fmt(bytes / MIB);
    const v8Heap = heap === "v8";
    recordResults(
      `memory-one-group${v8Heap ? "-v8-heap" : ""}`,
      `## Memory of one huge entry: a first start over a group of ${fmt(MEMBERS)} members${v8Heap ? ", V8's heap sizing" : ""}

Command: \`npm run bench -- one-group --size ${MEMBERS}${v8Heap ? " --v8-heap" : ""}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}; OpenLDAP slapd from Debian, on loopback. Load average at the end:
${os
  .loadavg()
  .map((load) => fmt(load, 1))
  .join(", ")}.

The first start (capture's first import, then every projection's bulk build) over a
directory of that one group and ${fmt(PEOPLE)} people of four attributes (so that the import
is a run the projector builds in bulk), in a process of its own (bench/one-group-start.ts)
${v8Heap ? "with V8's own heap sizing (no annal heap settings)" : "with annal's heap settings (src/cli/heap.ts)"}. Resident set from
\`/proc/self/status\` (\`VmHWM\`: the peak); heap and external memory sampled every 20 ms;
GC from perf_hooks' \`gc\` entries against the process's CPU over the run.

| measure | value |
| --- | ---: |
| resident set at the start (MiB) | ${mib(m.before)} |
| peak resident set, import (MiB) | ${mib(m.importPeak)} |
| peak resident set, whole first start (MiB) | ${mib(m.peak)} |
| largest V8 heap: total / used (MiB) | ${mib(m.heapTotal)} / ${mib(m.heapUsed)} |
| largest external (MiB) | ${mib(m.external)} |
| import / projections (s) | ${fmt(m.importMs / 1000, 1)} / ${fmt(m.projectMs / 1000, 1)} |
| GC / CPU of the process (ms) | ${fmt(m.gcMs)} / ${fmt(m.cpuMs)} (${fmt((100 * m.gcMs) / m.cpuMs)}%) |
`,
    );
  } finally {
    await db.close();
    await slapd.stop();
  }
}

/** Runs bench/one-group-start.ts in a process of its own; its line of JSON. */
async function firstStartAlone(env: NodeJS.ProcessEnv): Promise<Measured> {
  const child = spawn(process.execPath, [path.join(import.meta.dirname, "one-group-start.ts")], {
    env,
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const [code] = (await once(child, "exit")) as [number | null];
  if (code !== 0) throw new Error(`bench/one-group-start.ts ended with status ${code}`);
  return JSON.parse(out.trim().split("\n").at(-1)!) as Measured;
}
