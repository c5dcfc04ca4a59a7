import type { Jobs } from "../jobs/index.ts";
import { readCaptureCheckpoint, writeCaptureCheckpoint } from "./checkpoints.ts";
import type { CaptureContext, CaptureResult } from "./context.ts";
import { captureOnce, snapshotIfDue, type CaptureSource } from "./service.ts";
import { recordPassFailed, recordPassSucceeded } from "./status.ts";

export const CAPTURE_QUEUE = "annal-capture";

export interface CaptureSchedule {
  readonly source: CaptureSource;
  /** Between two passes, in ms. */
  readonly interval: number;
  /** Poll only: between two full reconciliations, in ms. */
  readonly reconcileInterval: number;
  /** Between two periodic snapshots of every entry, in ms (0: never). */
  readonly snapshotInterval: number;
}

export interface CaptureWorker {
  /** One pass now, in this process (read-your-writes after annal's own directory writes). */
  captureNow(): Promise<CaptureResult>;
  stop(): Promise<void>;
}

/** How long one job runs passes before it hands its turn back to the queue. */
const TURN_MS = 5 * 60_000;

/**
 * A job whose process died stops heartbeating; pg-boss's supervision (once a minute) fails it
 * once its heartbeat is this old, and the next job (queued by the minute's schedule) takes
 * over. Before turns heartbeated, such a job held the queue until it expired, an hour later.
 */
const HEARTBEAT_SECONDS = 10;

/** A success is noted at most this often (every failure is noted at once). */
const NOTE_SUCCESS_EVERY_MS = 1000;

/**
 * Runs capture in one process at a time across every annal process: a pg-boss job (a
 * `stately` queue holds at most one job waiting and one running) is a turn of passes, one
 * every `interval`, run in the process that took the job, for up to five minutes; it then
 * queues the next turn, which any process may take. Passes run back to back in the turn, so
 * a change waits at most `interval` (plus the pass) for its pass, not for pg-boss to notice
 * the next job too. The turn heartbeats, so a turn whose process died is failed and replaced
 * in a minute or two (a cron schedule queues one every minute, which the queue drops while
 * one waits).
 */
export async function startCaptureWorker(
  jobs: Jobs,
  context: CaptureContext,
  schedule: CaptureSchedule,
): Promise<CaptureWorker> {
  const { boss } = jobs;
  await jobs.ensureQueue(CAPTURE_QUEUE, {
    policy: "stately",
    retryLimit: 0,
    expireInSeconds: 3600,
  });
  const pass = async (): Promise<CaptureResult> => {
    const reconcile = schedule.source === "poll" && (await reconcileDue(context, schedule));
    const result = await captureOnce(context, schedule.source, { reconcile });
    if (reconcile)
      await writeCaptureCheckpoint(context.pool, "reconcile", new Date().toISOString());
    await snapshotIfDue(context, schedule.snapshotInterval);
    return result;
  };
  const stopping = new AbortController();
  let successNotedAt = 0;
  let failing = false;
  const notedPass = async () => {
    try {
      await pass();
      if (failing || Date.now() - successNotedAt >= NOTE_SUCCESS_EVERY_MS) {
        await recordPassSucceeded(context.pool, schedule.source);
        successNotedAt = Date.now();
        failing = false;
      }
    } catch (error) {
      failing = true;
      context.log.error({ err: error }, "directory capture pass failed; the next pass retries");
      await recordPassFailed(context.pool, schedule.source, error).catch(() => {});
    }
  };
  const queueNextTurn = () => boss.send(CAPTURE_QUEUE, {}, { heartbeatSeconds: HEARTBEAT_SECONDS });
  await boss.work(CAPTURE_QUEUE, { pollingIntervalSeconds: 0.5 }, async ([job]) => {
    const turn = AbortSignal.any([stopping.signal, ...(job ? [job.signal] : [])]);
    const ends = Date.now() + TURN_MS;
    try {
      while (!turn.aborted && Date.now() < ends) {
        await notedPass();
        await pause(schedule.interval, turn);
      }
    } finally {
      await queueNextTurn();
    }
  });
  await boss.schedule(CAPTURE_QUEUE, "* * * * *", {}, { heartbeatSeconds: HEARTBEAT_SECONDS });
  await queueNextTurn();
  return {
    captureNow: pass,
    async stop() {
      stopping.abort();
      await boss.offWork(CAPTURE_QUEUE);
    },
  };
}

/** Waits `ms`, or less if `signal` aborts first. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

async function reconcileDue(context: CaptureContext, schedule: CaptureSchedule): Promise<boolean> {
  const last = await readCaptureCheckpoint(context.pool, "reconcile");
  return last === undefined || Date.now() - Date.parse(last) >= schedule.reconcileInterval;
}
