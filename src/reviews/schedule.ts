import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { logLoopFailure } from "../db/index.ts";
import type { Logger } from "../logger.ts";
import { WrongExpectedVersionError } from "../store/index.ts";
import { databaseClock, type Actor, type EngineDeps } from "../workflow/index.ts";
import type { ReviewDefinition } from "./definition.ts";
import { HistoryBuildingPending, resumeCampaign, startCampaign } from "./start.ts";
import { REVIEW_CAMPAIGNS, REVIEW_ITEMS } from "../../projections/reviews/index.ts";

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
 * Starts the items of campaigns whose start was cut short (the process died between recording
 * the campaign and starting its items' instances): every campaign started more than a minute ago
 * with an item the reviews projection knows no instance of. Starting an item is idempotent, so an
 * item whose instance is only not projected yet is not started twice.
 */
async function resumeCutShort(
  deps: EngineDeps,
  now: Date,
  log: Pick<Logger, "info" | "warn" | "error">,
): Promise<void> {
  const found = await deps.pool.query<{ campaign_id: string }>(
    `SELECT DISTINCT i.campaign_id FROM ${REVIEW_ITEMS} AS i
       JOIN ${REVIEW_CAMPAIGNS} AS c ON c.campaign_id = i.campaign_id
      WHERE i.instance_id IS NULL AND c.started_at < $1::timestamptz - interval '1 minute'`,
    [now],
  );
  for (const { campaign_id: campaignId } of found.rows) {
    const started = await resumeCampaign(deps, campaignId, { as: SCHEDULE_ACTOR });
    if (started > 0) {
      log.info(
        { campaignId, started },
        `review campaign ${campaignId}: started ${started} items its start had left`,
      );
    }
  }
}

/**
 * Starts each `schedule = "quarterly"` review's campaign of the current quarter (the database's
 * clock, UTC) once: on the quarter's first day, or at the first look after it when annal was not
 * running then; and completes the starts cut short (`resumeCutShort`). Looks every
 * `intervalMs`; a start refused while the history is being built is tried at the next look.
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
    for (;;) {
      try {
        const now = await databaseClock(deps.pool);
        await resumeCutShort(deps, now, log);
        const quarter = quarterOf(now);
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
