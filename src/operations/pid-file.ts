import { readFileSync } from "node:fs";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/** What `annal start` leaves in its data directory for `annal stop` and `annal logs`. */
export interface PidFile {
  readonly pid: number;
  readonly startedAt: string;
  /** The file its log goes to, besides standard output. */
  readonly log: string;
}

/**
 * `<dataDir>/annal.process`: the annal started from this directory (JSON). Not `annal.pid`,
 * which is the embedded PostgreSQL's lock (src/app/embedded-lock.ts).
 */
export function pidFilePath(dataDir: string): string {
  return path.join(dataDir, "annal.process");
}

/** `<dataDir>/annal.log`: its log, JSON lines, appended across starts. */
export function logFilePath(dataDir: string): string {
  return path.join(dataDir, "annal.log");
}

/**
 * Writes the pid file for this process; the returned function removes it, unless another
 * start has written its own meanwhile (the file names that one then).
 */
export async function writePidFile(dataDir: string): Promise<() => Promise<void>> {
  await mkdir(dataDir, { recursive: true });
  const file = pidFilePath(dataDir);
  const content: PidFile = {
    pid: process.pid,
    startedAt: new Date().toISOString(),
    log: logFilePath(dataDir),
  };
  await writeFile(file, `${JSON.stringify(content)}\n`);
  return async () => {
    const now = await readPidFile(dataDir);
    if (now?.pid === process.pid) await rm(file, { force: true });
  };
}

/** The pid file's content, or undefined when there is none (or it is not one). */
export async function readPidFile(dataDir: string): Promise<PidFile | undefined> {
  try {
    const parsed = JSON.parse(await readFile(pidFilePath(dataDir), "utf8")) as Partial<PidFile>;
    if (!Number.isInteger(parsed.pid) || typeof parsed.log !== "string") return undefined;
    return parsed as PidFile;
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` is a running Node.js process: a pid reused after a crash by an unrelated
 * program is not an annal, and must not be signalled.
 */
export function isRunningNode(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EPERM") return false;
  }
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] ?? "";
    return path.basename(command).startsWith("node");
  } catch {
    return true; // no /proc here: trust the signal check
  }
}
