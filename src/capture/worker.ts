import { hostname } from "node:os";
import type pg from "pg";
import { logLoopFailure, sideConnection } from "../db/index.ts";
import type { Jobs } from "../jobs/index.ts";
import type { CaptureContext, CaptureResult } from "./context.ts";
import { captureOnce, fullPassesIfDue, type FullPassSchedule } from "./service.ts";
import { recordPassFailed, recordPassSucceeded } from "./status.ts";
import { Wakeup } from "./wakeup.ts";
import { PushedWrites } from "./pushed.ts";
import { watchAccesslog } from "./watch.ts";
import {
  accesslogIndexHint,
  readAccesslogIndexes,
  type AccesslogIndexes,
} from "./accesslog-indexes.ts";

export interface CaptureSchedule extends FullPassSchedule {
  /** Between two passes, in ms. */
  readonly interval: number;
}

export interface CaptureWorker {
  /** One pass now, in this process (read-your-writes after annal's own directory writes). */
  captureNow(): Promise<CaptureResult>;
  /** Whether the directory tells this worker of each write as it logs it (the watch). */
  watched(): boolean;
  stop(): Promise<void>;
}

/** The session advisory lock whose holder is the one process that runs capture's passes. */
const CAPTURE_LOCK = "annal:capture";

/**
 * The application name of the lock's connection is `annal-capture-lock:<pid>@<host>`, so that
 * `annal status` can say which process holds capture: PostgreSQL knows the backend that holds
 * the lock, not the annal process behind it.
 */
export const CAPTURE_LOCK_APPLICATION = "annal-capture-lock";

/** How often a process that does not hold the lock tries to take it. */
const STANDBY_MS = 1000;

/** A success is noted at most this often (every failure is noted at once). */
const NOTE_SUCCESS_EVERY_MS = 1000;

/**
 * Between two passes while the directory tells of each write as it logs it (the accesslog
 * watch is open and delivering), unless the configured interval is longer: the passes are
 * then a safety net, and an idle one still costs the directory a search.
 */
export const WATCHED_PASS_INTERVAL_MS = 30_000;

/** After a full pass fails, the next is not tried for this long. */
const FULL_PASS_RETRY_MS = 60_000;

/**
 * Runs capture's passes, one every `interval`, in one process at a time across every annal
 * process: the one whose connection holds a session advisory lock. The others try to take it
 * every second. When the holder stops, or dies, or loses its connection, PostgreSQL releases
 * the lock with the session, and another process takes over within a second. (Capture ran as
 * a pg-boss job before: a new worker waited up to two minutes for pg-boss's cached view of the
 * queue to see the last job end, and a dead one's job held the queue until pg-boss noticed.)
 * Passes may meet `captureNow` and another process's pass in a handover: an accesslog pass
 * records each page holding its checkpoint's row lock, and poll passes run one at a time
 * (`captureByPolling`), so none records a change twice, or over a later read.
 *
 * The full passes (the poll source's reconciliation, the periodic snapshot) read every entry
 * and take as long as the directory is large: the holder runs them beside its passes, one at
 * a time, so fresh changes go on being captured meanwhile.
 *
 * With the accesslog source the holder also keeps a search of the accesslog open, on which
 * the directory sends each write's record as it logs it (`watchAccesslog`), and records it as
 * it comes (`PushedWrites`), without waiting for a pass or searching again; where it cannot
 * tell that a record follows the checkpoint, the next pass runs at once.
 */
export async function startCaptureWorker(
  context: CaptureContext,
  schedule: CaptureSchedule,
): Promise<CaptureWorker> {
  // A stop aborts a pass: the first start's import (whose transaction then rolls back, and
  // the next start imports again) would otherwise hold the process for as long as it runs.
  const pass = (): Promise<CaptureResult> =>
    captureOnce(context, schedule.source, { signal: stopping.signal });
  const indexes = schedule.source === "accesslog" ? accesslogIndexCheck(context) : undefined;
  let successNotedAt = 0;
  let failing = false;
  /** One pass, noted for /readyz; whether it succeeded. */
  const notedPass = async (): Promise<boolean> => {
    try {
      const startedAt = performance.now();
      const result = await pass();
      if (result.recorded === 0) await indexes?.idlePassTook(performance.now() - startedAt);
      if (failing || Date.now() - successNotedAt >= NOTE_SUCCESS_EVERY_MS) {
        await recordPassSucceeded(context.pool, schedule.source);
        successNotedAt = Date.now();
        failing = false;
      }
      return true;
    } catch (error) {
      if (stopping.signal.aborted) return false; // stopped mid-pass: nothing failed
      failing = true;
      logLoopFailure(
        context.log,
        error,
        {},
        "directory capture pass failed; the next pass retries",
      );
      await recordPassFailed(context.pool, schedule.source, error).catch(() => {});
      return false;
    }
  };

  const stopping = new AbortController();
  let fullPass: Promise<void> | undefined;
  let fullPassRetryAt = 0;
  /** Starts the full passes that are due, unless they are running or failed a while ago. */
  const startFullPasses = () => {
    if (fullPass || Date.now() < fullPassRetryAt) return;
    fullPass = fullPassesIfDue(context, schedule, stopping.signal)
      .catch((error: unknown) => {
        if (stopping.signal.aborted) return;
        fullPassRetryAt = Date.now() + FULL_PASS_RETRY_MS;
        logLoopFailure(
          context.log,
          error,
          {},
          "a full pass of the directory (reconciliation or snapshot) failed; it is tried again in a minute",
        );
      })
      .finally(() => {
        fullPass = undefined;
      });
  };

  const wakeup = new Wakeup();
  let watch: { readonly stopping: AbortController; readonly done: Promise<void> } | undefined;
  let watched = false;
  const startWatch = () => {
    if (watch || schedule.source !== "accesslog") return;
    const watchStopping = new AbortController();
    const done = watchAccesslog(context, {
      onWrite: () => wakeup.wake(),
      pushed: (opened) => new PushedWrites(context, opened, { onGap: () => wakeup.wake() }),
      onDelivering: (delivering) => {
        watched = delivering;
      },
      signal: watchStopping.signal,
    });
    watch = { stopping: watchStopping, done };
  };
  const stopWatch = async () => {
    const stopped = watch;
    watch = undefined;
    stopped?.stopping.abort();
    await stopped?.done;
  };

  // The lock's connection is opened beside the pool, not taken from it: held for as long as
  // this process leads, it would be one fewer for the passes (and with a pool of one, none).
  // A process that does not lead keeps it too, to try again on it.
  let connection: pg.Client | undefined;
  let leading = false;
  // A connection that breaks takes the lock with it: drop it, and a leader takes the next turn
  // now, to take the lock again or stop the watch (a leader whose watch delivers waits 30 s
  // between turns, and went on recording what the directory pushed, with no lock, until then).
  // A connection that was not leading (one that could not be opened: the database is away)
  // wakes nothing: the next try comes a standby's wait later, not at once, again and again.
  const drop = (client: pg.Client) => {
    if (client === connection) {
      connection = undefined;
      if (leading) wakeup.wake();
      leading = false;
    }
    client.end().catch(() => {});
  };
  /** Whether this process holds the lock now, taking it if it is free. */
  const hold = async (): Promise<boolean> => {
    if (leading) return true;
    let client = connection;
    try {
      if (!client) {
        const opened = sideConnection(
          context.pool,
          `${CAPTURE_LOCK_APPLICATION}:${process.pid}@${hostname()}`,
        );
        opened.on("error", () => drop(opened));
        connection = client = opened;
        await opened.connect();
      }
      const taken = await client.query<{ locked: boolean }>(
        "SELECT pg_try_advisory_lock(hashtext($1)) AS locked",
        [CAPTURE_LOCK],
      );
      leading = client === connection && taken.rows[0]?.locked === true;
    } catch (error) {
      if (client) drop(client);
      context.log.warn({ err: error }, "could not ask for capture's lock; trying again");
    }
    return leading;
  };
  const loop = (async () => {
    while (!stopping.signal.aborted) {
      if (await hold()) {
        if (await notedPass()) {
          startFullPasses();
          startWatch();
        }
        const interval = watched
          ? Math.max(schedule.interval, WATCHED_PASS_INTERVAL_MS)
          : schedule.interval;
        await wakeup.wait(interval, stopping.signal);
      } else {
        await stopWatch();
        await wakeup.wait(STANDBY_MS, stopping.signal);
      }
    }
    await stopWatch();
    // Ending the session lets the lock go.
    const held = connection;
    connection = undefined;
    leading = false;
    await held?.end().catch(() => {});
  })();
  return {
    captureNow: pass,
    watched: () => watched,
    async stop() {
      stopping.abort();
      await loop;
      await fullPass;
    },
  };
}

/** An idle accesslog pass slower than this suggests the accesslog lacks an index. */
const SLOW_IDLE_PASS_MS = 250;

/**
 * Says once, at the first idle pass, when the accesslog lacks an index capture's passes need:
 * from `cn=config` where annal may read it, otherwise when an idle pass is slow. Only a
 * warning: capture works without the index, at a cost to the directory on every pass.
 */
function accesslogIndexCheck(context: CaptureContext): {
  idlePassTook(ms: number): Promise<void>;
} {
  let indexes: Promise<AccesslogIndexes> | undefined;
  let said = false;
  return {
    async idlePassTook(ms) {
      if (said) return;
      indexes ??= readAccesslogIndexes(context).catch(() => ({ readable: false }) as const);
      const known = await indexes;
      if (known.readable) {
        said = true;
        if (known.missing.length === 0) return;
        context.log.warn(
          { missing: known.missing, database: known.database },
          `the accesslog has no index of ${known.missing.join(", ")}: every capture pass reads all of it; ${accesslogIndexHint(known.missing, known.database)}`,
        );
      } else if (ms >= SLOW_IDLE_PASS_MS) {
        said = true;
        context.log.warn(
          { ms: Math.round(ms) },
          `an idle capture pass took ${Math.round(ms)} ms: if the accesslog has no index of reqEnd, ${accesslogIndexHint(["reqEnd"])}`,
        );
      }
    },
  };
}

/** The pg-boss queue capture ran as before it held a lock of its own. */
const RETIRED_CAPTURE_QUEUE = "annal-capture";

/**
 * Removes the pg-boss queue and cron schedule capture ran as before it held a lock of its own:
 * a database from then would otherwise still queue a job there every minute, which nothing
 * takes. In two starts: the schedule first, the queue on a later start. pg-boss's timekeeper
 * may already have queued the schedule's next job for sending, and sending it to a queue
 * that is gone logs an error.
 */
export async function retireCaptureQueue(jobs: Jobs): Promise<void> {
  if (!(await jobs.boss.getQueue(RETIRED_CAPTURE_QUEUE))) return;
  const schedules = await jobs.boss.getSchedules();
  if (schedules.some((schedule) => schedule.name === RETIRED_CAPTURE_QUEUE)) {
    await jobs.boss.unschedule(RETIRED_CAPTURE_QUEUE);
    return;
  }
  await jobs.boss.deleteQueue(RETIRED_CAPTURE_QUEUE);
}
