import { rm } from "node:fs/promises";
import { AnnalError } from "../errors/index.ts";
import { isRunningNode, pidFilePath, readPidFile } from "./pid-file.ts";

/** No annal started from this directory runs. */
export class NotRunningError extends AnnalError {
  constructor(dataDir: string, detail: string) {
    super("ANNAL_NOT_RUNNING", `no annal started from here runs (${dataDir}): ${detail}`, {
      status: 404,
    });
  }
}

/** The process asked to stop still ran after the grace period. */
export class StopTimeoutError extends AnnalError {
  readonly pid: number;
  constructor(pid: number, graceMs: number) {
    super(
      "ANNAL_STOP_TIMEOUT",
      `annal (pid ${pid}) was asked to stop (SIGTERM) and still runs after ${graceMs / 1000} s`,
      {
        hint: `it may still be finishing requests: run annal stop again with a longer --timeout, see annal logs, or end it at once with kill -KILL ${pid} (its requests in flight are lost)`,
      },
    );
    this.pid = pid;
  }
}

/** How often stopping looks whether the process has gone. */
const POLL_MS = 100;

/**
 * Stops the annal whose pid file is in `dataDir`: SIGTERM (annal finishes its requests in
 * flight and stops its parts in order), then waits up to `graceMs` for the process to end.
 * A pid file whose process is gone (killed) is removed.
 *
 * @throws NotRunningError `ANNAL_NOT_RUNNING` without a running annal there.
 * @throws StopTimeoutError `ANNAL_STOP_TIMEOUT` when it still runs after the grace period.
 */
export async function stopAnnal(
  dataDir: string,
  options: { readonly graceMs: number },
): Promise<{ pid: number }> {
  const pidFile = await readPidFile(dataDir);
  if (pidFile === undefined) throw new NotRunningError(dataDir, "no pid file");
  const { pid } = pidFile;
  if (!isRunningNode(pid)) {
    await rm(pidFilePath(dataDir), { force: true });
    throw new NotRunningError(
      dataDir,
      `its process ${pid} is gone (the stale pid file is removed)`,
    );
  }
  process.kill(pid, "SIGTERM");
  const deadline = Date.now() + options.graceMs;
  while (isRunningNode(pid)) {
    if (Date.now() >= deadline) throw new StopTimeoutError(pid, options.graceMs);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return { pid };
}
