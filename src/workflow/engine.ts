import { setTimeout as sleep } from "node:timers/promises";
import { advanceInstance, type EngineDeps } from "./advance.ts";
import { wake, WAKE_QUEUE, type WakeJob } from "./commit.ts";
import type { InstanceRun } from "./run.ts";
import { StickyRuns } from "./sticky.ts";
import { fireDueTimers } from "./timers.ts";
import { logLoopFailure } from "../db/index.ts";

export interface WorkflowEngineOptions extends EngineDeps {
  /** Instances advanced at once by this process. Default 8. */
  readonly concurrency?: number;
  /** How often due timers are looked for. Default 1000 ms. */
  readonly timerIntervalMs?: number;
  /** How often idle RUNNING instances are woken (a wake-up lost with a process). Default 60 s. */
  readonly sweepIntervalMs?: number;
  /**
   * Runs of instance code kept parked between wakes (`StickyRuns`), so that a wake goes on
   * from where the code waits instead of replaying it. Default 1,000; 0 keeps none. Unused
   * when the deps bring their `sticky` cache (shared with the commands of this process).
   */
  readonly stickyRuns?: number;
}

export interface WorkflowEngine {
  /** Fires the timers that are due now (the loop does this every `timerIntervalMs`). */
  fireTimers(): Promise<number>;
  /** Wakes instances that can go on by themselves and have been idle `idleMs` (default 60 s). */
  sweep(idleMs?: number): Promise<number>;
  /** The runs this engine keeps parked, and how its wakes have used them. */
  readonly sticky: StickyRuns<InstanceRun>;
  stop(): Promise<void>;
}

/**
 * Runs the engine in this process: a pg-boss worker on the wake-up queue advances instances
 * (many processes may run one: an instance's lock lets one advance it at a time), a loop fires
 * due timers, and a sweep wakes instances a wake-up was lost for (their worker died). At
 * start it sweeps once, so instances left mid-way by a stopped process go on.
 */
export async function startWorkflowEngine(options: WorkflowEngineOptions): Promise<WorkflowEngine> {
  const { jobs, log } = options;
  const concurrency = options.concurrency ?? 8;
  const sticky = options.sticky ?? new StickyRuns<InstanceRun>(options.stickyRuns ?? 1000);
  const deps = { ...options, sticky };
  // notify: a wake-up reaches an idle engine at once (LISTEN/NOTIFY), not at its next poll.
  await jobs.ensureQueue(WAKE_QUEUE, {
    retryLimit: 5,
    retryDelay: 1,
    expireInSeconds: 900,
    notify: true,
  });
  const workOptions = {
    batchSize: concurrency,
    burstWhenBatchFull: true,
    pollingIntervalSeconds: 0.5,
    // NOTIFY only reaches a worker for a wake-up due at once; one deferred (an instance another
    // engine held, woken again 2 s later) is found by polling, which with NOTIFY on would
    // otherwise slow to pg-boss's 30 s backstop.
    notifyPollingIntervalSeconds: 1,
  } as const;
  const worker = await jobs.boss.work<WakeJob, unknown, typeof workOptions>(
    WAKE_QUEUE,
    workOptions,
    async (batch) => {
      await Promise.all(batch.map((job) => advance(deps, job.data.instanceId)));
    },
  );

  const stopping = new AbortController();
  const loops: Promise<void>[] = [];
  const every = (ms: number, work: () => Promise<unknown>, what: string) => {
    loops.push(
      (async () => {
        while (!stopping.signal.aborted) {
          await sleep(ms, undefined, { signal: stopping.signal }).catch(() => {});
          if (stopping.signal.aborted) return;
          await work().catch((error: unknown) =>
            logLoopFailure(log, error, {}, `workflow engine: ${what} failed`),
          );
        }
      })(),
    );
  };
  const fireTimers = async () => {
    let total = 0;
    for (let fired = -1; fired !== 0;) {
      fired = await fireDueTimers(options.pool, jobs);
      total += fired;
    }
    return total;
  };
  const sweep = (idleMs = 60_000) => sweepIdle(options, idleMs);
  // At start every instance that can go on is woken: those a stopped or killed process was
  // advancing included (their locks went with their connections).
  await sweep(0).catch((error: unknown) =>
    logLoopFailure(log, error, {}, "workflow engine: sweep failed"),
  );
  every(options.timerIntervalMs ?? 1000, fireTimers, "firing timers");
  every(options.sweepIntervalMs ?? 60_000, () => sweep(), "the sweep");

  let stopped: Promise<void> | undefined;
  return {
    fireTimers,
    sweep,
    sticky,
    stop() {
      stopped ??= (async () => {
        stopping.abort();
        await jobs.boss.offWork(WAKE_QUEUE, { id: worker, wait: true });
        await Promise.all(loops);
        sticky.clear();
      })();
      return stopped;
    },
  };
}

/** Advances one instance; one that another engine holds, or that changed meanwhile, is woken again shortly. */
async function advance(deps: EngineDeps, instanceId: string): Promise<void> {
  // A command that answered the instance wakes it in its own transaction and lets the lock go
  // just after its commit: the wake often comes first. Waiting for the lock a moment costs
  // milliseconds; being woken again costs the 2 s below (a deferred job is found by polling).
  const result = await advanceInstance(deps, instanceId, { lockWaitMs: 500 });
  if (result === "locked" || result === "conflict") {
    // Whoever holds it will be done soon, or is dead and its lock gone: look again shortly.
    await wake(deps.jobs, undefined, [instanceId], {
      startAfterSeconds: result === "locked" ? 2 : 0,
    });
  }
}

/**
 * Wakes every instance whose last event says it may have something to do by itself (not
 * waiting for an answer or a child; a retry whose timer a dying process took) and that has not
 * moved for `idleMs`: the process advancing it may have died before it was done. Waking one
 * with nothing to do costs one look. Read from the instance streams' last events, not
 * a projection, so it works in a process that runs no projector.
 */
async function sweepIdle(deps: EngineDeps, idleMs: number): Promise<number> {
  const idle = await deps.pool.query<{ instance_id: string }>(
    `SELECT substr(s.stream_id, 10) AS instance_id FROM streams AS s
       JOIN events AS e ON e.stream_id = s.stream_id AND e.stream_version = s.version
      WHERE s.stream_id LIKE 'workflow-%' AND s.stream_id NOT LIKE 'workflow-definition-%'
        AND e.type IN ('WorkflowStarted', 'StepScheduled', 'StepCompleted', 'StepFailed',
                       'FlowValueRecorded', 'DialogCompleted', 'RequestAnswered', 'ChildCompleted',
                       'DeadlinePassed', 'WorkflowRetried', 'WorkflowCancelled')
        AND s.updated_at <= now() - make_interval(secs => $1)`,
    [idleMs / 1000],
  );
  await wake(
    deps.jobs,
    undefined,
    idle.rows.map((row) => row.instance_id),
  );
  return idle.rowCount ?? 0;
}
