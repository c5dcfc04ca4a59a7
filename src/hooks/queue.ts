import type { SendOptions } from "pg-boss";
import type { Jobs } from "../jobs/index.ts";
import type { ResolvedProvider } from "./registry.ts";

/** The pg-boss queue of change events to process: one job per accepted change event. */
export const CHANGE_EVENTS_QUEUE = "annal-change-events";

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
export function jobOptions(provider: ResolvedProvider | undefined): SendOptions {
  const retry = provider?.retry ?? FALLBACK_RETRY;
  const delaySeconds = Math.ceil(retry.delayMs / 1000);
  return {
    retryLimit: retry.limit,
    retryDelay: delaySeconds,
    // pg-boss refuses backoff from a zero delay: "0" means retry at once, every time.
    ...(delaySeconds > 0
      ? {
          retryBackoff: true,
          retryDelayMax: Math.max(delaySeconds, Math.ceil(retry.maxDelayMs / 1000)),
        }
      : { retryBackoff: false }),
    // The worker ends an attempt at the provider's timeout itself; pg-boss's expiry is the
    // backstop for a worker that died, so it comes later.
    expireInSeconds: Math.ceil((provider?.timeoutMs ?? 300_000) / 1000) + 30,
  };
}

export function ensureChangeEventsQueue(jobs: Jobs): Promise<void> {
  return jobs.ensureQueue(CHANGE_EVENTS_QUEUE);
}
