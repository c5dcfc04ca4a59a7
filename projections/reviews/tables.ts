import { liveTable } from "../../src/projector/index.ts";

export const REVIEWS_PROJECTION = "reviews";

/** The live tables of the `reviews` projection, quoted and schema-qualified. */
export const REVIEW_CAMPAIGNS = liveTable(REVIEWS_PROJECTION, "review_campaigns");
export const REVIEW_ITEMS = liveTable(REVIEWS_PROJECTION, "review_items");

/** A row of `review_campaigns`: a campaign as its start recorded it. */
export interface ReviewCampaignRow {
  readonly campaign_id: string;
  readonly review: string;
  readonly title: string;
  readonly definition: unknown;
  readonly started_at: Date;
  readonly deadline: Date;
  readonly started_by: { accountId: string; name: string; dn: string | null };
  readonly item_count: number;
  readonly unreviewable: { group: string; member: string }[];
  readonly position: number;
}

/**
 * A row of `review_items`: one item, its history as the campaign's start read it, and where its
 * instance of `annal.review-item` stands. `state`: `open` (its dialog waits), `decided`,
 * `undecided` (nobody decided by the deadline: kept and flagged, or revoked, as configured).
 * `revocation`: null (none asked), `pending`, `retrying`, `failed` (every attempt failed: the
 * instance is ERRORED, in failed work, for an operator to retry), `done`, `gone` (the member had
 * left the group already).
 */
export interface ReviewItemRow {
  readonly campaign_id: string;
  readonly item_id: string;
  readonly ordinal: number;
  readonly kind: string;
  readonly group_uuid: string;
  readonly group_dn: string;
  readonly member_uuid: string | null;
  readonly member_dn: string;
  readonly member_norm: string;
  readonly attribute: string;
  readonly access_function: string | null;
  readonly reviewers: string[];
  readonly since: Date;
  readonly began: unknown;
  readonly last_review: unknown;
  readonly instance_id: string | null;
  readonly dialog_id: string | null;
  /** Who may decide now, canonical (normalised DNs, `account:<id>`, as the inbox keeps them). */
  readonly assignees: string[];
  readonly state: "open" | "decided" | "undecided";
  readonly escalation_level: number | null;
  readonly decision: "keep" | "revoke" | null;
  readonly reason: string | null;
  readonly decided_by: { accountId: string; name: string; dn: string | null } | null;
  readonly decided_for: { accountId: string; name: string; dn: string | null } | null;
  readonly decided_at: Date | null;
  readonly decision_position: number | null;
  readonly revocation: string | null;
  readonly revocation_error: unknown;
  readonly position: number;
}

export const reviewTables = (table: (name: string) => string): readonly string[] => [
  `CREATE TABLE ${table("review_campaigns")} (
     campaign_id uuid PRIMARY KEY,
     review text NOT NULL,
     title text NOT NULL,
     definition jsonb NOT NULL,
     started_at timestamptz NOT NULL,
     deadline timestamptz NOT NULL,
     started_by jsonb NOT NULL,
     item_count integer NOT NULL,
     unreviewable jsonb NOT NULL,
     position bigint NOT NULL)`,
  `CREATE INDEX ON ${table("review_campaigns")} (review, started_at DESC)`,
  `CREATE TABLE ${table("review_items")} (
     campaign_id uuid NOT NULL,
     item_id text NOT NULL,
     ordinal integer NOT NULL,
     kind text NOT NULL,
     group_uuid uuid NOT NULL,
     group_dn text NOT NULL,
     member_uuid uuid,
     member_dn text NOT NULL,
     member_norm text NOT NULL,
     attribute text NOT NULL,
     access_function text,
     reviewers text[] NOT NULL,
     since timestamptz NOT NULL,
     began jsonb NOT NULL,
     last_review jsonb,
     instance_id uuid,
     dialog_id text,
     assignees text[] NOT NULL DEFAULT '{}',
     state text NOT NULL DEFAULT 'open',
     escalation_level integer,
     decision text,
     reason text,
     decided_by jsonb,
     decided_for jsonb,
     decided_at timestamptz,
     decision_position bigint,
     revocation text,
     revocation_error jsonb,
     position bigint NOT NULL,
     PRIMARY KEY (campaign_id, item_id))`,
  `CREATE INDEX ON ${table("review_items")} (campaign_id, ordinal)`,
  `CREATE INDEX ON ${table("review_items")} (instance_id)`,
  `CREATE INDEX ON ${table("review_items")} (group_uuid, member_norm, decided_at DESC)`,
  // The items whose instance is not started yet: a start cut short, resumed by the schedule.
  `CREATE INDEX ON ${table("review_items")} (campaign_id) WHERE instance_id IS NULL`,
  `CREATE INDEX ON ${table("review_items")} USING gin (assignees)`,
];
