import type { ErrorCodeSpec } from "./spec.ts";

/** Access review campaigns (`docs/access-reviews.md`). */
export const REVIEW_CODES = {
  ANNAL_REVIEW_NOT_CONFIGURED: {
    status: 404,
    meaning:
      "No `[[reviews]]` table has the name given, or this annal configures no review (so it deploys no review item definition).",
    hint: "name a review of annal.toml's [[reviews]] tables (annal review list shows them); a review added to annal.toml needs a restart",
    graphql: "ANNAL_REVIEW_NOT_CONFIGURED",
  },
  ANNAL_REVIEW_NOT_FOUND: {
    status: 404,
    meaning:
      "No review campaign, or no item of one, has the id given (or the account may not see it).",
    hint: "take ids from reviewCampaigns and reviewItems",
    graphql: "ANNAL_REVIEW_NOT_FOUND",
  },
  ANNAL_REVIEW_DECISION_INVALID: {
    status: 400,
    meaning:
      "A decision cannot be taken as given: it is not `keep` or `revoke`, it lacks the reason it needs (a revocation always; a keep where the review says `reasonRequiredForKeep`), or the item is no longer open. Each refused item is named with its reason; the others of the same call are decided.",
    graphql: "ANNAL_REVIEW_DECISION_INVALID",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
