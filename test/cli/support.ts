import { spawn, type ChildProcess } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";

/** bin/annal.js: the launcher users run, so the tests cover it too. */
export const ANNAL_BIN = path.resolve(import.meta.dirname, "../../bin/annal.js");

/**
 * The test's environment without what would steer annal elsewhere (a database, a
 * configuration file, a port), plus `env`.
 */
export function annalEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const name of ["DATABASE_URL", "ANNAL_CONFIG", "PORT", "ANNAL_TEST_POSTGRES_URL"]) {
    delete base[name];
  }
  return { ...base, ...env };
}

export interface AnnalRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `annal <args>` to completion. */
export async function runAnnal(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string>; node?: string } = {},
): Promise<AnnalRun> {
  const child = spawnAnnal(args, options);
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const { code, signal } = await exited(child);
  return { code, signal, stdout, stderr };
}

export function spawnAnnal(
  args: readonly string[],
  options: {
    cwd?: string;
    env?: Record<string, string>;
    node?: string;
    /** In a process group of its own, as a terminal runs it (signal it with `-pid`). */
    group?: boolean;
  } = {},
): ChildProcess {
  return spawn(options.node ?? process.execPath, [ANNAL_BIN, ...args], {
    cwd: options.cwd,
    env: annalEnv(options.env),
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.group ?? false,
  });
}

export function exited(
  child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
}

/**
 * Collects a running annal's log lines (JSON on standard output) and resolves with its URL
 * once it logs that it serves; rejects if it exits first or takes longer than `timeoutMs`.
 */
export function serving(
  child: ChildProcess,
  timeoutMs = 60_000,
): { url: Promise<string>; lines: Record<string, unknown>[]; stderr: () => string } {
  const lines: Record<string, unknown>[] = [];
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const url = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`annal did not serve: ${stderr}`)), timeoutMs);
    createInterface({ input: child.stdout! }).on("line", (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      lines.push(entry);
      if (typeof entry.url === "string" && String(entry.msg).startsWith("annal serves")) {
        clearTimeout(timer);
        resolve(entry.url);
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`annal exited with ${code} before serving: ${stderr}`));
    });
  });
  return { url, lines, stderr: () => stderr };
}

/** A temporary directory with an `annal.toml` of `toml`, removed when the test ends. */
export async function configDir(
  t: { teardown(fn: () => unknown): void },
  toml: string,
): Promise<{ dir: string; file: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), "annal-cli-"));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  // Run as root, the embedded PostgreSQL runs as the `postgres` user, which must be able to
  // reach a data directory below this one.
  await chmod(dir, 0o755);
  const file = path.join(dir, "annal.toml");
  await writeFile(file, toml);
  return { dir, file };
}

/** An `Output` whose lines the test reads: `out` and `err` as written. */
export function capturedOutput() {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    output: { out: (line: string) => out.push(line), err: (line: string) => err.push(line) },
  };
}
