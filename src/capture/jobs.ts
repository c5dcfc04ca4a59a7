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

/**
 * Runs capture as a pg-boss job: one pass per job, in one process at a time across every
 * annal process (a `stately` queue holds at most one job waiting and one running). Each pass
 * queues the next one `interval` later; a cron schedule re-queues one every minute in case
 * the chain was broken (a process killed mid-pass), which the queue drops while one waits.
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
  const next = () =>
    boss.send(CAPTURE_QUEUE, {}, { startAfter: new Date(Date.now() + schedule.interval) });
  await boss.work(CAPTURE_QUEUE, { pollingIntervalSeconds: 0.5 }, async () => {
    try {
      await pass();
      await recordPassSucceeded(context.pool, schedule.source);
    } catch (error) {
      context.log.error({ err: error }, "directory capture pass failed; the next pass retries");
      await recordPassFailed(context.pool, schedule.source, error).catch(() => {});
    } finally {
      await next();
    }
  });
  await boss.schedule(CAPTURE_QUEUE, "* * * * *", {});
  await boss.send(CAPTURE_QUEUE, {});
  return {
    captureNow: pass,
    async stop() {
      await boss.offWork(CAPTURE_QUEUE);
    },
  };
}

async function reconcileDue(context: CaptureContext, schedule: CaptureSchedule): Promise<boolean> {
  const last = await readCaptureCheckpoint(context.pool, "reconcile");
  return last === undefined || Date.now() - Date.parse(last) >= schedule.reconcileInterval;
}
