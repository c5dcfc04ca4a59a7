import type { ActorRef } from "./workflow.ts";

/**
 * Access review campaigns (`docs/access-reviews.md`). A campaign's start and its items are on
 * its own stream, `review-campaign-<campaignId>`; each item is then an instance of annal's
 * built-in workflow `annal.review-item` (its dialog is the reviewer's decision, its step the
 * revocation), so every decision, escalation and directory write is the engine's own event.
 */
export const reviewCampaignStream = (campaignId: string) => `review-campaign-${campaignId}`;

/** The event types of a campaign's stream. */
export const REVIEW_EVENT_TYPES = ["ReviewCampaignStarted", "ReviewItemsListed"] as const;

/** The name of annal's built-in workflow whose instances are a campaign's items. */
export const REVIEW_ITEM_WORKFLOW = "annal.review-item";

/** A campaign began: its definition as configured then, and its deadline, computed once. */
export interface ReviewCampaignStarted {
  readonly campaignId: string;
  /** The `[[reviews]]` name. */
  readonly review: string;
  readonly title: string;
  /** The definition as it was configured when the campaign started (what it was run by). */
  readonly definition: unknown;
  /** ISO 8601: the moment the items were read at. */
  readonly startedAt: string;
  /** ISO 8601: when undecided items become `undecided` ones. */
  readonly deadline: string;
  readonly startedBy: ActorRef;
  /** How many items the campaign has (listed by `ReviewItemsListed` events after it). */
  readonly itemCount: number;
  /** Members for whom no reviewer was found and no fallback is configured: not items. */
  readonly unreviewable: readonly { readonly group: string; readonly member: string }[];
}

/** One membership under review, with its history as the log knew it at the campaign's start. */
export interface ReviewItem {
  readonly itemId: string;
  /** `membership` (of a group in scope) or `grant` (a membership carrying an access function). */
  readonly kind: "membership" | "grant";
  readonly groupUUID: string;
  readonly groupDn: string;
  readonly memberUUID: string | null;
  readonly memberDn: string;
  /** The attribute that lists the member (`member`, `uniqueMember`). */
  readonly attribute: string;
  /** For a grant: the access function the group carries. */
  readonly accessFunction: string | null;
  /** Who decides: principals (DNs, account ids). */
  readonly reviewers: readonly string[];
  /** ISO 8601: when the membership began (the start of its current stretch). */
  readonly since: string;
  /** The change that made it: its log position and its cause, as the change feed gives them. */
  readonly began: {
    readonly position: number | null;
    /** `import`, `directory`, `workflow`, `mutation`, `changeEvent`, or `event`. */
    readonly kind: string;
    /** Who: the directory's writer, the workflow's approver, the mutation's account. */
    readonly by: string | null;
    readonly workflow: string | null;
    readonly instanceId: string | null;
  };
  /** The last campaign that decided this membership, and what it decided. */
  readonly lastReview: {
    readonly campaignId: string;
    readonly decision: string;
    readonly decidedAt: string;
    readonly by: string | null;
  } | null;
}

/** A chunk of a campaign's items (at most 500 an event), in item order. */
export interface ReviewItemsListed {
  readonly campaignId: string;
  readonly items: readonly ReviewItem[];
}
