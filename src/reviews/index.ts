/**
 * Access reviews (`docs/access-reviews.md`): campaigns configured as `[[reviews]]`, whose items
 * are instances of annal's built-in workflow `annal.review-item` (a dialog for the decision,
 * escalation and delegation as any dialog's, a step for the revocation), read from the
 * `reviews` projection, reported as a signed export.
 */
export type { ReviewDefinition } from "./definition.ts";
export { prepareReviewItemDefinition } from "./built-in.ts";
export type { ReviewItemRef } from "./item-workflow.ts";
export { reviewItemsAt, type ReviewItems } from "./items.ts";
export {
  HistoryBuildingPending,
  resumeCampaign,
  startCampaign,
  type StartedCampaign,
} from "./start.ts";
export { quarterOf, scheduledCampaignId, SCHEDULE_ACTOR, startReviewSchedule } from "./schedule.ts";
export { decideItems, type Decision, type DecisionOutcome } from "./decide.ts";
export {
  decisionKeys,
  decisionKeysNow,
  readCampaign,
  readCampaigns,
  readItem,
  readItems,
  readProgress,
  isReviewItemRef,
  itemsQuery,
  reviewItemData,
  reviewsOfMembership,
  unreviewedMemberships,
  type ItemFilter,
  type ReviewItemData,
  type ReviewItemView,
  type ReviewProgress,
} from "./read.ts";
export { campaignReport, type SignedReport } from "./report.ts";
