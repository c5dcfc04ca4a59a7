import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import v8 from "node:v8";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { BUILT_IN_REDACTED_ATTRIBUTES } from "../src/config/index.ts";
import {
  captureFromAccesslog,
  createNormalizer,
  ensureImported,
  type CaptureContext,
} from "../src/capture/index.ts";
import { createDirectoryClient, loadDirectorySchema } from "../src/directory/index.ts";
import { Projector, waitForProjection } from "../src/projector/index.ts";
import {
  baseEntries,
  launchSlapd,
  SLAPD_BASE,
  SLAPD_ROOT_DN,
  toLdifChunks,
} from "../src/slapd/index.ts";
import { EventStore } from "../src/store/index.ts";
import { allProjections } from "../projections/index.ts";
import { loopHoldsDuring, longestHoldProfile, type LoopHolds } from "../test/support/loop-holds.ts";
import { benchDatabase, benchSize, fmt, machine, recordResults, sizeOption } from "./support.ts";

/** Members of the one large group (`--size 400k`). */
const MEMBERS = benchSize(100_000);
const GROUP = `cn=everyone,ou=groups,${SLAPD_BASE}`;
const member = (i: number) => `uid=user${i},ou=people,${SLAPD_BASE}`;
/** Warnings and errors are printed: a projection batch that fails is retried, and slow. */
const said =
  (level: string) =>
  (...args: unknown[]) =>
    process.stderr.write(`bench: large-entry: ${level}: ${JSON.stringify(args)}\n`);
const quiet = { info() {}, warn: said("warn"), error: said("error"), debug() {} };

/** The young generation's size now, in bytes (both semi-spaces). */
const newSpace = () =>
  v8.getHeapSpaceStatistics().find((space) => space.space_name === "new_space")?.space_size ?? 0;

interface Step {
  readonly what: string;
  readonly holds: LoopHolds;
  readonly profile?: { cpu: number; wall: number; top: { fn: string; ms: number }[] }[];
}

/**
 * How long each step of annal's handling of one large entry holds the event loop (issue 57
 * item 3): a directory whose only large entry is a group of `MEMBERS` members, in a real
 * slapd; the first import of it, the projections applying that import, capture recording a
 * one-member removal from it, and the projections applying that. Each step runs alone (the
 * projector is stopped while capture records), with a timer asking for a turn of the loop
 * every millisecond (`loopHoldsDuring`): the longest hold is how long a request arriving then
 * would have waited. `--profile` also prints the functions of each step's longest hold.
 *
 * The steps run in a process of their own that sets annal's heap settings before it loads
 * annal's modules (bench/large-entry-start.ts), as bin/annal.js does for `annal start`
 * (src/cli/heap.ts): the server's young generation stays at 2 MiB, where with V8's own sizing
 * it grows to 64 MiB, and a scavenge that finds a large entry's 100,000 values alive copies
 * them all in one pause of 10 ms and more. (Set later, once the benchmark's modules have
 * loaded, the settings come too late: the young generation has grown, and it does not shrink
 * back. Given to Node.js on its command line, `--semi-space-growth-factor=1` does not keep it
 * small either: it grew to 64 MiB all the same, tried on Node.js 26.10.) `--v8-heap` runs the
 * steps in this process, with V8's own sizing.
 */
export async function largeEntryBenchmark(): Promise<void> {
  const v8Heap = process.argv.includes("--v8-heap");
  if (!v8Heap && process.env[HEAP_SET] !== "1") {
    await inProcessOfItsOwn();
    return;
  }
  const profiling = process.argv.includes("--profile");
  const password = randomBytes(12).toString("base64url");
  process.stderr.write(`bench: large-entry: seeding slapd with a group of ${fmt(MEMBERS)}\n`);
  const slapd = await launchSlapd({
    dir: mkdtempSync(path.join(os.tmpdir(), "annal-bench-slapd-")),
    rootPassword: password,
    seedLdif: () =>
      toLdifChunks([
        ...baseEntries(),
        ...Array.from({ length: 20 }, (_, i) => ({
          dn: member(i),
          attributes: {
            objectClass: ["inetOrgPerson"],
            uid: [`user${i}`],
            cn: [`User ${i}`],
            sn: [`Number${i}`],
          },
        })),
        {
          dn: GROUP,
          attributes: {
            objectClass: ["groupOfNames"],
            cn: ["everyone"],
            member: Array.from({ length: MEMBERS }, (_, i) => member(i)),
          },
        },
      ]),
    removeOnStop: true,
    startTimeoutMs: 600_000,
  });
  const db = await benchDatabase();
  const directory = createDirectoryClient({
    url: slapd.url,
    bindDN: SLAPD_ROOT_DN,
    password,
  });
  const steps: Step[] = [];
  try {
    const context: CaptureContext = {
      pool: db.pool,
      store: await EventStore.open(db.pool),
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
    const step = async (what: string, work: () => Promise<unknown>) => {
      process.stderr.write(`bench: large-entry: ${what}\n`);
      let done: Step;
      if (profiling) {
        const { result, holds } = await longestHoldProfile(() => loopHoldsDuring(work));
        done = { what, holds: result.holds, profile: holds };
      } else {
        done = { what, holds: (await loopHoldsDuring(work)).holds };
      }
      steps.push(done);
      const { holds, profile } = done;
      process.stderr.write(
        `bench: large-entry: ${what}: ${fmt(holds.ms)} ms, longest hold ${fmt(holds.longest, 1)} ms of CPU (${fmt(holds.longestWall, 1)} ms of wall time), ${holds.over(10)} over 10 ms\n`,
      );
      for (const hold of profile ?? []) {
        process.stderr.write(
          `  a hold of ${fmt(hold.cpu, 1)} ms (${fmt(hold.wall, 1)} ms wall):\n`,
        );
        for (const { fn, ms } of hold.top) process.stderr.write(`    ${fmt(ms, 1)} ms ${fn}\n`);
      }
    };
    const projected = async () => {
      const projector = await Projector.start({
        pool: db.pool,
        projections: allProjections,
        log: quiet,
      });
      try {
        const head = await context.store.head();
        const started = performance.now();
        await Promise.all(
          allProjections.map(async (projection) => {
            await waitForProjection(db.pool, projection.name, head, 3_600_000);
            const ms = performance.now() - started;
            if (ms > 1000) {
              process.stderr.write(
                `bench: large-entry: ${projection.name} took ${fmt(ms / 1000, 1)} s\n`,
              );
            }
          }),
        );
      } finally {
        await projector.stop();
      }
    };
    await step("the first import (capture)", () => ensureImported(context, "accesslog"));
    await step("the projections apply the import", projected);
    await directory.modify(GROUP, [
      { operation: "delete", attribute: "member", values: [member(1)] },
    ]);
    await step("capture records a one-member removal", async () => {
      const { recorded } = await captureFromAccesslog(context);
      if (recorded !== 1) throw new Error(`capture recorded ${recorded} changes, not 1`);
    });
    await step("the projections apply it", projected);
    await step("an idle capture pass", () => captureFromAccesslog(context));
  } finally {
    await directory.close();
    await db.close();
    await slapd.stop();
  }
  const rows = steps
    .map(
      ({ what, holds }) =>
        `| ${what} | ${fmt(holds.ms)} | ${fmt(holds.longest, 1)} | ${holds.over(10)} | ${holds.over(50)} | ${fmt(holds.longestWall, 1)} |`,
    )
    .join("\n");
  recordResults(
    "large-entry",
    `## Event-loop holds of one large entry: a group of ${fmt(MEMBERS)} members

Command: \`npm run bench -- large-entry${sizeOption()}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}; OpenLDAP slapd from Debian, on loopback. Load average at the end:
${os
  .loadavg()
  .map((load) => fmt(load, 1))
  .join(", ")}.

A directory of one group of ${fmt(MEMBERS)} members (and 20 people), each step alone in this
process, with a timer asking for a turn of the event loop every millisecond
(test/support/loop-holds.ts): a hold is the CPU time the main thread spent between two turns,
the time a request arriving then would have waited for the loop on a machine to itself. The
last column is the longest wall time between two turns, which a busy machine lengthens.
${
  v8Heap
    ? "With V8's own heap sizing (`--v8-heap`): the young generation grows as V8 sees fit."
    : "With annal's heap settings, set as `annal start` sets them (src/cli/heap.ts, before annal's modules load)."
} Young generation at the end: ${fmt(newSpace() / 2 ** 20, 1)} MiB.

| step | wall ms | longest hold, CPU ms | holds > 10 ms | holds > 50 ms | longest wait, wall ms |
| --- | ---: | ---: | ---: | ---: | ---: |
${rows}
`,
  );
}

/** In the environment of the process the steps run in (bench/large-entry-start.ts): "1". */
export const HEAP_SET = "ANNAL_BENCH_LARGE_ENTRY_HEAP_SET";

/** This benchmark run again by bench/large-entry-start.ts, its arguments passed on. */
async function inProcessOfItsOwn(): Promise<void> {
  const child = spawn(
    process.execPath,
    [fileURLToPath(new URL("./large-entry-start.ts", import.meta.url)), ...process.argv.slice(2)],
    { stdio: "inherit", env: { ...process.env, [HEAP_SET]: "1" } },
  );
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", resolve);
  });
  if (code !== 0) throw new Error(`bench: large-entry: its process ended with ${code}`);
}
