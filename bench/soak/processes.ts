import { spawn, type ChildProcess } from "node:child_process";
import { openSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const ANNAL = path.resolve(import.meta.dirname, "../../bin/annal.js");

/** One `annal start --only <part>` of the soak, its log in a file of the run's folder. */
export interface SoakProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly log: string;
}

/**
 * Starts `annal start --only <part>` (or the whole of annal with `part` "all") and resolves
 * once it logs that it started; rejects with its log's last lines if it ends first or takes
 * longer than `timeoutMs` (a first start imports the whole directory: give it time).
 */
export async function startSoakPart(options: {
  name: string;
  part: "api" | "workers" | "projector";
  config: string;
  dir: string;
  env: Record<string, string>;
  timeoutMs: number;
}): Promise<SoakProcess> {
  const log = path.join(options.dir, `${options.name}.log`);
  const child = spawn(
    process.execPath,
    [ANNAL, "start", "--only", options.part, "--config", options.config],
    {
      env: { ...process.env, ...options.env, NODE_ENV: "production" },
      stdio: ["ignore", openSync(log, "w"), "inherit"],
    },
  );
  const tail = () => readFileSync(log, "utf8").trimEnd().split("\n").slice(-20).join("\n");
  await new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(
      () => reject(new Error(`${options.name} did not start; its log ends:\n${tail()}`)),
      options.timeoutMs,
    );
    child.once("exit", (code, signal) => {
      clearTimeout(deadline);
      reject(new Error(`${options.name} ended (${signal ?? code}); its log ends:\n${tail()}`));
    });
    // Its log is a file: read it as it grows until the start line.
    const poll = setInterval(() => {
      const lines = readFileSync(log, "utf8").split("\n");
      const started = lines.some((line) => {
        try {
          const entry = JSON.parse(line) as { parts?: unknown; msg?: unknown };
          return Array.isArray(entry.parts) && String(entry.msg).startsWith("annal ");
        } catch {
          return false;
        }
      });
      if (started) {
        clearInterval(poll);
        clearTimeout(deadline);
        child.removeAllListeners("exit");
        resolve();
      }
    }, 500);
    child.once("exit", () => clearInterval(poll));
  });
  return { name: options.name, child, log };
}

/** Stops a part (SIGTERM) and waits for it; SIGKILL after 30 s. */
export async function stopSoakPart(part: SoakProcess): Promise<void> {
  const { child } = part;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  await gone;
  clearTimeout(timer);
}

/** Whether a part is still running. */
export const running = (part: SoakProcess) =>
  part.child.exitCode === null && part.child.signalCode === null;

/**
 * A process's proportional set size in bytes (`Pss` of /proc/<pid>/smaps_rollup): its own
 * pages, and its share of pages it shares, so PostgreSQL's shared buffers are counted once
 * over all its processes rather than once each as RSS would. Zero when it is gone.
 */
export function pssBytes(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    const kib = /^Pss:\s+(\d+) kB/m.exec(text);
    return kib ? Number(kib[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** A process's resident set (`VmRSS`) in bytes; zero when it is gone. */
export function rssBytes(pid: number): number {
  try {
    const text = readFileSync(`/proc/${pid}/status`, "utf8");
    const kib = /^VmRSS:\s+(\d+) kB/m.exec(text);
    return kib ? Number(kib[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** `pid` and every process descended from it (PostgreSQL's backends under its postmaster). */
export function processTree(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    // The command in /proc/<pid>/stat may hold spaces and parentheses: parentPid reads the
    // fields after its last ')'.
    const ppid = parentPid(Number(entry));
    if (ppid !== undefined) parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) tree.push(...(parents.get(tree[i]!) ?? []));
  return tree;
}

/** A process's parent (PostgreSQL's postmaster, given one of its backends); undefined when gone. */
export function parentPid(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command may hold spaces and parentheses: the fields after its last ')' are fixed.
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}
