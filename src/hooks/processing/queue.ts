import type { SendOptions } from "pg-boss";
import type { Jobs } from "../../jobs/index.ts";
import type { ResolvedProvider } from "../definition/registry.ts";

/**
 * The pg-boss queue of change events to process: one job per accepted change event, keyed by
 * its source and subject. Its policy, `key_strict_fifo`, runs the jobs of one key one at a
 * time in the order they were queued (the order the webhook accepted them): two changes to one
 * employee never apply in parallel or out of order, while other subjects go on alongside. A
 * job waiting for a retry holds its key, so a subject's later change events wait for it.
 */
export const CHANGE_EVENTS_QUEUE = "annal-change-events-by-subject";

/**
 * Where pg-boss puts a job that failed for good without the worker settling it itself: its
 * worker died during the last attempt (the job expired), or could not record an outcome.
 * A worker of this queue records `ChangeEventAbandoned` for it (see `startHookWorkers`).
 */
export const CHANGE_EVENTS_DEAD_LETTER_QUEUE = "annal-change-events-dead";

/**
 * The queue of annal versions before 0.2, without ordering: still worked, so that jobs
 * queued before an upgrade are processed; nothing new is queued there.
 */
export const LEGACY_CHANGE_EVENTS_QUEUE = "annal-change-events";

/** The ordering key of a change event's job: its source and subject. */
export function subjectKey(source: string, subject: string): string {
  return JSON.stringify([source, subject]);
}

/** A job's data: where to find the change event, and how many attempts came before. */
export interface ChangeEventJob {
  readonly receivedEventId: string;
  /** Attempts made before this job (0, or the attempts before a retry from failed work). */
  readonly priorAttempts: number;
}

/** Used when the provider is unknown here (a hook removed since the event was accepted). */
const FALLBACK_RETRY = { limit: 5, delayMs: 10_000, maxDelayMs: 3_600_000 };

/**
 * pg-boss options for one change event's job, from its provider: retries with exponential
 * backoff (`delay · 2^n` with jitter, at most `maxDelay`), and how long an attempt may run.
 */
export function jobOptions(
  provider: ResolvedProvider | undefined,
  about: { readonly source: string; readonly subject: string },
): SendOptions {
  const retry = provider?.retry ?? FALLBACK_RETRY;
  const delaySeconds = Math.ceil(retry.delayMs / 1000);
  return {
    singletonKey: subjectKey(about.source, about.subject),
    retryLimit: retry.limit,
    retryDelay: delaySeconds,
    // pg-boss refuses backoff from a zero delay: "0" means retry at once, every time.
    ...(delaySeconds > 0
      ? {
          retryBackoff: true,
          retryDelayMax: Math.max(delaySeconds, Math.ceil(retry.maxDelayMs / 1000)),
        }
      : { retryBackoff: false }),
    // The worker ends an attempt at the provider's timeout itself, and a worker that died is
    // found by the queue's heartbeat (JOB_HEARTBEAT_SECONDS) within seconds; the expiry is the
    // backstop for a worker alive but stuck, so it comes later.
    expireInSeconds: Math.ceil((provider?.timeoutMs ?? 300_000) / 1000) + 30,
  };
}

export async function ensureChangeEventsQueue(jobs: Jobs): Promise<void> {
  await jobs.ensureQueue(CHANGE_EVENTS_DEAD_LETTER_QUEUE);
  await jobs.ensureQueue(CHANGE_EVENTS_QUEUE, {
    policy: "key_strict_fifo",
    deadLetter: CHANGE_EVENTS_DEAD_LETTER_QUEUE,
  });
}
