import { spawn } from "node:child_process";
import { openSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { freePort } from "../src/ports.ts";
import { sampleDirectoryToml, type BenchDatabase, type SampleDirectory } from "./support.ts";

/** `annal start` as a process of its own, as an operator runs it, over a sample directory. */
export interface AnnalProcess {
  /** `http://127.0.0.1:<port>`. */
  readonly base: string;
  readonly pid: number;
  /** Where its log goes (JSON lines). */
  readonly log: string;
  /** Rejects, with the log's last lines, if the process ends before `stop`. */
  readonly ended: Promise<never>;
  /** Resolves once it answers `/healthz`; rejects as `ended` does. */
  readonly healthy: Promise<void>;
  /** SIGTERM, and its exit. */
  stop(): Promise<void>;
}

/**
 * Starts `bin/annal.js start` (`NODE_ENV=production`, the default settings) against the
 * sample directory and the database, with `toml` added to the configuration; its log to a
 * file in `dir`.
 */
export async function startAnnalProcess(options: {
  readonly sample: SampleDirectory;
  readonly db: BenchDatabase;
  readonly dir: string;
  readonly toml?: string;
  /** Writes a V8 CPU profile (`--cpu-prof`) of the process into this directory at its exit. */
  readonly cpuProfileDir?: string;
  /**
   * Writes a sampling heap profile (`--heap-prof`, what allocated the most) into this directory
   * at the process's exit, and a heap snapshot there at each SIGUSR2 (`heapSnapshot`).
   */
  readonly heapDir?: string;
}): Promise<AnnalProcess> {
  const { sample, db, dir } = options;
  const port = await freePort();
  const config = path.join(dir, "annal.toml");
  const log = path.join(dir, "server.log");
  writeFileSync(
    config,
    `[server]
host = "127.0.0.1"
port = ${port}

[log]
level = "info"

${options.toml ?? ""}

${sampleDirectoryToml(sample)}`,
  );
  const profile = options.cpuProfileDir
    ? ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfileDir}`]
    : [];
  const heap = options.heapDir
    ? [
        "--heap-prof",
        `--heap-prof-dir=${options.heapDir}`,
        "--heapsnapshot-signal=SIGUSR2",
        `--diagnostic-dir=${options.heapDir}`,
      ]
    : [];
  const server = spawn(
    process.execPath,
    [...profile, ...heap, "bin/annal.js", "start", "--config", config],
    {
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        LDAP_PASSWORD: sample.password,
        NODE_ENV: "production",
      },
      stdio: ["ignore", openSync(log, "w"), "inherit"],
    },
  );
  let stopping = false;
  const ended = new Promise<never>((_, reject) => {
    server.once("exit", (code, signal) => {
      if (stopping) return;
      const last = readFileSync(log, "utf8").trimEnd().split("\n").slice(-20).join("\n");
      reject(
        new Error(
          `the server ended during the run (${signal ?? `status ${code}`}); its log ends:\n${last}`,
        ),
      );
    });
  });
  ended.catch(() => {}); // raced with every phase of the caller
  const base = `http://127.0.0.1:${port}`;
  const healthy = Promise.race([
    until(async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.ok === true),
    ended,
  ]);
  return {
    base,
    pid: server.pid!,
    log,
    ended,
    healthy,
    async stop() {
      if (server.exitCode !== null || server.signalCode !== null) return;
      stopping = true;
      const exited = new Promise((resolve) => server.once("exit", resolve));
      server.kill("SIGTERM");
      await exited;
    },
  };
}

/**
 * Whether the readers' indexes the first start dropped for its bulk load are all built again,
 * by the server's log: each projection that logged "first snapshots applied in bulk" with
 * indexes dropped has logged "readers' indexes built".
 */
export function readersIndexesBuilt(log: string): boolean {
  const logged = readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as { msg?: string; projection?: string; indexesDropped?: number }];
      } catch {
        return [];
      }
    });
  const dropped = logged.filter(
    (l) => l.msg === "first snapshots applied in bulk" && (l.indexesDropped ?? 0) > 0,
  );
  const built = new Set(
    logged.filter((l) => l.msg === "readers' indexes built").map((l) => l.projection),
  );
  return dropped.every((l) => built.has(l.projection));
}

/**
 * Polls `condition` every `intervalMs` (100) until it holds (the benchmark's own phases bound
 * it). A costly condition polls less often: it competes with what it measures.
 */
export async function until(condition: () => Promise<boolean>, intervalMs = 100): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, intervalMs));
}
