import type { ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { exited, spawnAnnal } from "../cli/support.ts";
import type { AnnalPart } from "../../src/app/parts.ts";

/**
 * One `annal start --only <part>` in a process of its own, for tests that kill it (SIGKILL)
 * or take its database away. Its JSON log lines are kept in `lines`.
 */
export interface AnnalProcess {
  readonly part: AnnalPart;
  readonly child: ChildProcess;
  /** Its log lines so far (JSON from standard output), parsed. */
  readonly lines: Record<string, unknown>[];
  /** Where it serves (`--only api`), once started; undefined for the other parts. */
  readonly url: string | undefined;
  stderr(): string;
  /** SIGKILL, and resolves once it is gone. */
  kill(): Promise<void>;
  /** SIGTERM, and resolves once it has stopped. */
  stop(): Promise<void>;
}

export interface StartPartOptions {
  /** Where its `annal.toml` is (its working directory). */
  readonly cwd: string;
  readonly env: Record<string, string>;
  /** How long it may take to start, in ms (default 60 s). */
  readonly timeoutMs?: number;
}

/**
 * Starts `annal start --only <part>` and resolves once it logs that it started (with its URL
 * for `api`); rejects with its standard error if it exits first. The test ends it: pass
 * `t` so that a process still running when the test ends is killed.
 */
export async function startPart(
  t: { teardown(fn: () => unknown): void },
  part: AnnalPart,
  options: StartPartOptions,
): Promise<AnnalProcess> {
  const child = spawnAnnal(["start", "--only", part], { cwd: options.cwd, env: options.env });
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited(child);
    }
  });
  const lines: Record<string, unknown>[] = [];
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const started = new Promise<string | undefined>((resolve, reject) => {
    // A deadline, not a wait: rejecting after the start resolved does nothing.
    AbortSignal.timeout(options.timeoutMs ?? 60_000).addEventListener("abort", () =>
      reject(new Error(`annal --only ${part} did not start: ${stderr}`)),
    );
    createInterface({ input: child.stdout! }).on("line", (line) => {
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      lines.push(entry);
      if (Array.isArray(entry.parts) && String(entry.msg).startsWith("annal ")) {
        resolve(typeof entry.url === "string" ? entry.url : undefined);
      }
    });
    child.once("exit", (code, signal) => {
      reject(new Error(`annal --only ${part} exited (${code ?? signal}) at start: ${stderr}`));
    });
  });
  const url = await started;
  return {
    part,
    child,
    lines,
    url,
    stderr: () => stderr,
    async kill() {
      child.kill("SIGKILL");
      await exited(child);
    },
    async stop() {
      child.kill("SIGTERM");
      await exited(child);
    },
  };
}
