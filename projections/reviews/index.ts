export { reviewsProjection } from "./projection.ts";
export {
  REVIEW_CAMPAIGNS,
  REVIEW_ITEMS,
  REVIEWS_PROJECTION,
  type ReviewCampaignRow,
  type ReviewItemRow,
} from "./tables.ts";
