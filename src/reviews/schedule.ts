import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { logLoopFailure } from "../db/index.ts";
import type { Logger } from "../logger.ts";
import { WrongExpectedVersionError } from "../store/index.ts";
import { databaseClock, type Actor, type EngineDeps } from "../workflow/index.ts";
import type { ReviewDefinition } from "./definition.ts";
import { HistoryBuildingPending, startCampaign } from "./start.ts";

/** Who starts a scheduled campaign. */
export const SCHEDULE_ACTOR: Actor = {
  accountId: "review-schedule",
  name: "the review schedule",
  dn: null,
  principals: [],
  access: [],
};

/** The first moment of the quarter `at` lies in (UTC): 1 January, 1 April, 1 July, 1 October. */
export function quarterOf(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), Math.floor(at.getUTCMonth() / 3) * 3, 1));
}

/**
 * The campaign id of a review's scheduled campaign of a quarter: the same in every process, so
 * that where several run workers, the first to record it wins and the others' append of the same
 * stream is refused (`WrongExpectedVersionError`), and none starts it twice.
 */
export function scheduledCampaignId(review: string, quarter: Date): string {
  const hex = createHash("sha256")
    .update(`review-schedule\n${review}\n${quarter.toISOString()}`)
    .digest("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Starts each `schedule = "quarterly"` review's campaign of the current quarter (the database's
 * clock, UTC) once: on the quarter's first day, or at the first look after it when annal was not
 * running then. Looks every `intervalMs`; a start refused while the history is being built is
 * tried at the next look.
 */
export function startReviewSchedule(
  deps: EngineDeps,
  reviews: readonly ReviewDefinition[],
  log: Pick<Logger, "info" | "warn" | "error">,
  intervalMs = 5_000,
): { stop(): Promise<void> } {
  const quarterly = reviews.filter((review) => review.schedule === "quarterly");
  const stopping = new AbortController();
  /** The quarter each review's campaign is known to exist for. */
  const done = new Map<string, number>();
  const loop = (async () => {
    if (quarterly.length === 0) return;
    for (;;) {
      try {
        const quarter = quarterOf(await databaseClock(deps.pool));
        for (const review of quarterly) {
          if (done.get(review.name) === quarter.getTime()) continue;
          const campaignId = scheduledCampaignId(review.name, quarter);
          const known = await deps.store.readStream(`review-campaign-${campaignId}`, { limit: 1 });
          if (known.length === 0) {
            try {
              const started = await startCampaign(deps, review, { as: SCHEDULE_ACTOR, campaignId });
              log.info(
                { review: review.name, campaignId, items: started.items },
                `review ${review.name}: started the campaign of the quarter from ${quarter.toISOString().slice(0, 10)}`,
              );
            } catch (error) {
              if (error instanceof HistoryBuildingPending) continue;
              if (!(error instanceof WrongExpectedVersionError)) throw error;
            }
          }
          done.set(review.name, quarter.getTime());
        }
      } catch (error) {
        logLoopFailure(log, error, {}, "the review schedule failed; trying again");
      }
      await sleep(intervalMs, undefined, { signal: stopping.signal }).catch(() => {});
      if (stopping.signal.aborted) return;
    }
  })();
  return {
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}
