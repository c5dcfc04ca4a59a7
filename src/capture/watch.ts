import { setTimeout as sleep } from "node:timers/promises";
import { DirectoryError, type DirectoryEntry } from "../directory/index.ts";
import { ACCESSLOG_ATTRIBUTES, ACCESSLOG_BINARY } from "./accesslog.ts";
import { readCaptureCheckpoint } from "./checkpoints.ts";
import type { CaptureContext } from "./context.ts";
import { ACCESSLOG_BASE, accesslogWritesAfter } from "./from-accesslog.ts";

/** Between a failed watch and the next, at first; doubled at each failure in a row. */
const RETRY_FIRST_MS = 1000;
const RETRY_LONGEST_MS = 30_000;
/** After the directory refused to keep the search open, how long before asking again. */
const REFUSED_RETRY_MS = 10 * 60_000;
/** Result codes that end a search the server kept open for a while: open it again. */
const ENDED = new Set([0, 3 /* timeLimitExceeded */, 4 /* sizeLimitExceeded */]);

/**
 * Tells capture of each write as the directory logs it, so that a change is captured at once
 * instead of at the next interval. A search of the accesslog is kept open (RFC 4533
 * `refreshAndPersist`, which OpenLDAP's `syncprov` overlay serves on the accesslog database)
 * and the server sends each new write's entry on it: with `pushed`, the whole record, which
 * capture records as it comes (`PushedWrites`); without, only that it came, and `onWrite` wakes
 * the capture loop. The passes still run and read the accesslog from their checkpoint, so a
 * lost watch, or a record it could not take, loses no change, only time. A directory that
 * will not keep the search open is noted once and asked again every ten minutes.
 *
 * `onDelivering` says whether the search is open and in its persist stage (true once the
 * server has sent what matched at first), false as soon as it ends: while it is, the passes
 * are only a safety net and can run far less often.
 */
export async function watchAccesslog(
  context: Pick<CaptureContext, "pool" | "directory" | "log">,
  options: {
    readonly onWrite: () => void;
    /**
     * Given, the watch asks for each write's whole record and hands it to what this returns
     * for the search opened from checkpoint `opened` (`PushedWrites`), instead of `onWrite`.
     */
    readonly pushed?: (opened: string) => {
      take(read: () => Promise<DirectoryEntry>): void;
      settled(): Promise<void>;
    };
    readonly onDelivering?: (delivering: boolean) => void;
    readonly signal: AbortSignal;
  },
): Promise<void> {
  const { onWrite, signal } = options;
  const delivering = (value: boolean) => options.onDelivering?.(value);
  let failures = 0;
  let refusalNoted = false;
  while (!signal.aborted) {
    let waitMs: number;
    const openedAt = Date.now();
    try {
      // From the checkpoint: the first answers are the writes no pass has recorded yet.
      // Before the first import there is none: wait for it.
      const since = await readCaptureCheckpoint(context.pool, "accesslog");
      if (since !== undefined) {
        const pushed = options.pushed?.(since);
        try {
          await context.directory.watch(ACCESSLOG_BASE, {
            scope: "one",
            filter: accesslogWritesAfter(since),
            signal,
            ...(pushed
              ? {
                  attributes: ACCESSLOG_ATTRIBUTES,
                  binaryAttributes: ACCESSLOG_BINARY,
                  onEntry: (read) => pushed.take(read),
                }
              : { onEntry: onWrite }),
            onPersisting: () => delivering(true),
          });
        } finally {
          // What this search pushed is recorded before the next is opened from the checkpoint.
          await pushed?.settled();
        }
      }
      failures = 0;
      waitMs = endedWait(openedAt);
    } catch (error) {
      const resultCode = error instanceof DirectoryError ? error.resultCode : undefined;
      if (resultCode !== undefined && ENDED.has(resultCode)) {
        failures = 0;
        waitMs = endedWait(openedAt);
      } else if (resultCode !== undefined) {
        if (!refusalNoted) {
          context.log.info(
            { err: error },
            "the directory does not send new accesslog entries as they are written (OpenLDAP: the syncprov overlay on the accesslog database); capture looks for changes every interval",
          );
        }
        refusalNoted = true;
        waitMs = REFUSED_RETRY_MS;
      } else {
        context.log.warn(
          { err: error },
          "the directory's accesslog watch failed; opening it again",
        );
        waitMs = Math.min(RETRY_FIRST_MS * 2 ** failures, RETRY_LONGEST_MS);
        failures++;
      }
    }
    delivering(false);
    // A write may have come while no search was open.
    if (!signal.aborted) onWrite();
    if (waitMs > 0) await sleep(waitMs, undefined, { signal }).catch(() => {});
  }
}

/** A search the server ended is opened again at once, unless it ended as soon as it opened. */
function endedWait(openedAt: number): number {
  return Date.now() - openedAt < RETRY_FIRST_MS ? RETRY_FIRST_MS : 0;
}
