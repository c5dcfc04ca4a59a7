import type { Queryable } from "../db/index.ts";
import type { ReviewItem } from "../events/index.ts";
import { CHANGES } from "../../projections/changes/index.ts";
import { logOrder } from "../store/index.ts";
import { ENTRIES } from "../../projections/entries/index.ts";
import {
  REVIEW_CAMPAIGNS,
  REVIEW_ITEMS,
  type ReviewCampaignRow,
  type ReviewItemRow,
} from "../../projections/reviews/index.ts";
import { canonicalPrincipal } from "../../projections/workflows/index.ts";
import {
  assigneeKeysAt,
  delegationsInForce,
  delegationsInForceNow,
  type Actor,
  type Delegation,
} from "../workflow/index.ts";
import type { ReviewItemRef } from "./item-workflow.ts";

/** An item with what became of it in the directory: the captured change of its revocation. */
export interface ReviewItemView extends ReviewItemRow {
  /** Whether the item is open past the campaign's deadline (its undecided outcome is owed). */
  readonly overdue: boolean;
  /** The change capture recorded of its revocation: its log position and when, or null. */
  readonly change_position: number | null;
  readonly change_at: Date | null;
}

export interface ReviewProgress {
  readonly total: number;
  readonly open: number;
  readonly decided: number;
  readonly undecided: number;
  readonly overdue: number;
  readonly escalated: number;
  readonly kept: number;
  readonly revoked: number;
  readonly revocationsFailed: number;
  /** By reviewer: each principal an item is assigned to now, with its counts. */
  readonly byReviewer: readonly {
    readonly reviewer: string;
    readonly open: number;
    readonly decided: number;
    readonly overdue: number;
  }[];
}

export async function readCampaigns(
  db: Queryable,
  filter: { readonly review?: string } = {},
): Promise<ReviewCampaignRow[]> {
  const found = await db.query<ReviewCampaignRow>(
    `SELECT * FROM ${REVIEW_CAMPAIGNS} WHERE $1::text IS NULL OR review = $1
      ORDER BY started_at DESC, campaign_id`,
    [filter.review ?? null],
  );
  return found.rows;
}

export async function readCampaign(
  db: Queryable,
  campaignId: string,
): Promise<ReviewCampaignRow | undefined> {
  const found = await db.query<ReviewCampaignRow>(
    `SELECT * FROM ${REVIEW_CAMPAIGNS} WHERE campaign_id = $1`,
    [campaignId],
  );
  return found.rows[0];
}

const ITEM_COLUMNS = `i.*, (i.state = 'open' AND c.deadline <= $2) AS overdue,
  rc.position AS change_position, rc.occurred_at AS change_at`;

/**
 * The captured change of an item's revocation: a change of the item's group caused by one of
 * its revocation steps, looked for only where a revocation was asked. (Unbounded by the group
 * and the item's revocation, the look-up was planned as a backward walk of the whole change
 * feed, filtered by cause, for every item of a page: changes has no index of causes.)
 */
const ITEM_JOINS = `JOIN ${REVIEW_CAMPAIGNS} AS c ON c.campaign_id = i.campaign_id
  LEFT JOIN LATERAL (
    SELECT ch.position, ch.occurred_at FROM ${CHANGES} AS ch
     WHERE i.instance_id IS NOT NULL AND i.revocation IS NOT NULL
       AND ch.entry_uuid = i.group_uuid
       AND ch.causation_id IN (SELECT s.id::text FROM events AS s
              WHERE s.stream_id = 'workflow-' || i.instance_id::text AND s.type = 'StepScheduled')
     ORDER BY ${logOrder("ch", "backward")} LIMIT 1) AS rc ON true`;

export interface ItemFilter {
  readonly state?: "open" | "decided" | "undecided";
  readonly overdue?: boolean;
  /**
   * Only items one of these keys may decide now: canonical principals (`canonicalPrincipal`:
   * normalised DNs, `account:<id>`), as `decisionKeys` gives them for an account.
   */
  readonly assignedTo?: readonly string[];
  readonly group?: string;
  /** Members whose DN contains this text, in any case. */
  readonly member?: string;
  readonly after?: number;
  readonly first?: number;
}

/** A campaign's items in their order, filtered; `now` (the database's clock) says what is overdue. */
export async function readItems(
  db: Queryable,
  campaignId: string,
  now: Date,
  filter: ItemFilter = {},
): Promise<ReviewItemView[]> {
  const { text, values } = itemsQuery(campaignId, now, filter);
  return (await db.query<ReviewItemView>(text, values)).rows;
}

/** The statement `readItems` makes (for a benchmark's EXPLAIN of it). */
export function itemsQuery(
  campaignId: string,
  now: Date,
  filter: ItemFilter = {},
): { readonly text: string; readonly values: unknown[] } {
  const params: unknown[] = [campaignId, now];
  const where = ["i.campaign_id = $1"];
  if (filter.state) where.push(`i.state = $${params.push(filter.state)}`);
  if (filter.overdue !== undefined) {
    where.push(`(i.state = 'open' AND c.deadline <= $2) = $${params.push(filter.overdue)}`);
  }
  if (filter.assignedTo) where.push(`i.assignees && $${params.push(filter.assignedTo)}::text[]`);
  if (filter.group) where.push(`lower(i.group_dn) = lower($${params.push(filter.group)})`);
  if (filter.member) where.push(`strpos(i.member_norm, lower($${params.push(filter.member)})) > 0`);
  if (filter.after !== undefined) where.push(`i.ordinal > $${params.push(filter.after)}`);
  const limit = filter.first === undefined ? "" : `LIMIT $${params.push(filter.first)}`;
  return {
    text: `SELECT ${ITEM_COLUMNS} FROM ${REVIEW_ITEMS} AS i ${ITEM_JOINS}
            WHERE ${where.join(" AND ")} ORDER BY i.ordinal ${limit}`,
    values: params,
  };
}

export async function readItem(
  db: Queryable,
  campaignId: string,
  itemId: string,
  now: Date,
): Promise<ReviewItemView | undefined> {
  const found = await db.query<ReviewItemView>(
    `SELECT ${ITEM_COLUMNS} FROM ${REVIEW_ITEMS} AS i ${ITEM_JOINS}
      WHERE i.campaign_id = $1 AND i.item_id = $3`,
    [campaignId, now, itemId],
  );
  return found.rows[0];
}

/** A campaign's progress now: open, decided, undecided, overdue, escalated; by reviewer. */
export async function readProgress(
  db: Queryable,
  campaignId: string,
  now: Date,
): Promise<ReviewProgress> {
  const totals = await db.query<Record<string, number>>(
    `SELECT count(*)::int AS total,
            count(*) FILTER (WHERE i.state = 'open')::int AS open,
            count(*) FILTER (WHERE i.state = 'decided')::int AS decided,
            count(*) FILTER (WHERE i.state = 'undecided')::int AS undecided,
            count(*) FILTER (WHERE i.state = 'open' AND c.deadline <= $2)::int AS overdue,
            count(*) FILTER (WHERE i.escalation_level IS NOT NULL)::int AS escalated,
            count(*) FILTER (WHERE i.decision = 'keep')::int AS kept,
            count(*) FILTER (WHERE i.decision = 'revoke')::int AS revoked,
            count(*) FILTER (WHERE i.revocation = 'failed')::int AS "revocationsFailed"
       FROM ${REVIEW_ITEMS} AS i JOIN ${REVIEW_CAMPAIGNS} AS c ON c.campaign_id = i.campaign_id
      WHERE i.campaign_id = $1`,
    [campaignId, now],
  );
  const byReviewer = await db.query<{
    reviewer: string;
    open: number;
    decided: number;
    overdue: number;
  }>(
    `SELECT r.reviewer,
            count(*) FILTER (WHERE i.state = 'open')::int AS open,
            count(*) FILTER (WHERE i.state = 'decided')::int AS decided,
            count(*) FILTER (WHERE i.state = 'open' AND c.deadline <= $2)::int AS overdue
       FROM ${REVIEW_ITEMS} AS i JOIN ${REVIEW_CAMPAIGNS} AS c ON c.campaign_id = i.campaign_id,
            unnest(CASE WHEN cardinality(i.assignees) > 0 THEN i.assignees ELSE i.reviewers END) AS r(reviewer)
      WHERE i.campaign_id = $1
      GROUP BY r.reviewer ORDER BY r.reviewer`,
    [campaignId, now],
  );
  const t = totals.rows[0] ?? {};
  return {
    total: t.total ?? 0,
    open: t.open ?? 0,
    decided: t.decided ?? 0,
    undecided: t.undecided ?? 0,
    overdue: t.overdue ?? 0,
    escalated: t.escalated ?? 0,
    kept: t.kept ?? 0,
    revoked: t.revoked ?? 0,
    revocationsFailed: t.revocationsFailed ?? 0,
    byReviewer: byReviewer.rows,
  };
}

/**
 * Who reviewed a member's membership of a group, when, and what they decided: every item of
 * every campaign on it, the latest first.
 */
export async function reviewsOfMembership(
  db: Queryable,
  memberDn: string,
  groupDn: string,
  now: Date,
): Promise<ReviewItemView[]> {
  const found = await db.query<ReviewItemView>(
    `SELECT ${ITEM_COLUMNS} FROM ${REVIEW_ITEMS} AS i ${ITEM_JOINS}
      WHERE i.member_norm = lower($1) AND lower(i.group_dn) = lower($3)
      ORDER BY c.started_at DESC`,
    [memberDn, now, groupDn],
  );
  return found.rows;
}

/**
 * The memberships the directory holds now that no campaign decided since `since` (e.g. in the
 * last 12 months): each group's `member` and `uniqueMember` values with no decided item since.
 * An item left undecided at its deadline is no review.
 */
export async function unreviewedMemberships(
  db: Queryable,
  since: Date,
  page: { readonly first: number; readonly offset: number },
): Promise<
  { groupUUID: string; groupDn: string; memberDn: string; lastReviewedAt: Date | null }[]
> {
  const found = await db.query<{
    group_uuid: string;
    group_dn: string;
    member_dn: string;
    last_reviewed_at: Date | null;
  }>(
    `SELECT g.entry_uuid AS group_uuid, g.dn AS group_dn, m.value AS member_dn,
            (SELECT max(i.decided_at) FROM ${REVIEW_ITEMS} AS i
              WHERE i.group_uuid = g.entry_uuid AND i.member_norm = lower(m.value)
                AND i.state = 'decided') AS last_reviewed_at
       FROM ${ENTRIES} AS g,
            unnest(ARRAY['member', 'uniqueMember']) AS a(name),
            jsonb_array_elements_text(coalesce(g.attributes -> a.name, '[]'::jsonb)) AS m(value)
      WHERE NOT EXISTS (SELECT 1 FROM ${REVIEW_ITEMS} AS i
              WHERE i.group_uuid = g.entry_uuid AND i.member_norm = lower(m.value)
                AND i.state = 'decided' AND i.decided_at >= $1)
      ORDER BY g.dn, m.value LIMIT $2 OFFSET $3`,
    [since, page.first, page.offset],
  );
  return found.rows.map((row) => ({
    groupUUID: row.group_uuid,
    groupDn: row.group_dn,
    memberDn: row.member_dn,
    lastReviewedAt: row.last_reviewed_at,
  }));
}

/**
 * The keys an account decides items by at `now`: its own (its id, `account:<id>`, its DN, its
 * principals) and, for each delegation in force to it, its delegator's (the delegator's
 * principals as the access projection has them then), canonical as the items keep assignees.
 */
export async function decisionKeys(db: Queryable, actor: Actor, now: Date): Promise<string[]> {
  return keysWith(db, actor, now, await delegationsInForce(db, now));
}

/**
 * `decisionKeys` at the database's clock, read with the delegations in one statement
 * (`delegationsInForceNow`): a reviewer's page asks for both. Without an actor (a page of
 * every item), the clock alone.
 */
export async function decisionKeysNow(
  db: Queryable,
  actor: Actor | undefined,
): Promise<{ readonly now: Date; readonly keys: string[] | undefined }> {
  if (actor === undefined) {
    const clock = await db.query<{ now: Date }>("SELECT annal_now() AS now");
    return { now: clock.rows[0]!.now, keys: undefined };
  }
  const { now, delegations } = await delegationsInForceNow(db);
  return { now, keys: await keysWith(db, actor, now, delegations) };
}

async function keysWith(
  db: Queryable,
  actor: Actor,
  now: Date,
  inForce: readonly Delegation[],
): Promise<string[]> {
  const keys = new Set(
    [
      actor.accountId,
      `account:${actor.accountId}`,
      ...(actor.dn ? [actor.dn] : []),
      ...actor.principals,
    ].map(canonicalPrincipal),
  );
  for (const delegation of inForce) {
    if (delegation.delegate.accountId !== actor.accountId) continue;
    for (const key of await assigneeKeysAt(db, delegation.delegator, now)) keys.add(key);
  }
  return [...keys];
}

/** An item's dialog's data as version 1 of `annal.review-item` recorded it: the item itself. */
export type ReviewItemData = ReviewItem & { readonly campaignId: string; readonly review: string };

/**
 * What the dialogs of review items show: for each reference (`ReviewItemRef`, the data of a
 * version 2 item's dialog), the item as the campaign listed it, as version 1 recorded it in the
 * dialog (its campaign's id and review's name beside it); null for an item the reviews
 * projection does not list. One statement for them all; answers in the order of `refs`.
 */
export async function reviewItemData(
  db: Queryable,
  refs: readonly ReviewItemRef[],
): Promise<(ReviewItemData | null)[]> {
  if (refs.length === 0) return [];
  const found = await db.query<ReviewItemRow & { review: string }>(
    `SELECT i.*, c.review FROM unnest($1::text[], $2::text[]) AS r(campaign_id, item_id)
       JOIN ${REVIEW_ITEMS} AS i ON i.campaign_id::text = r.campaign_id AND i.item_id = r.item_id
       JOIN ${REVIEW_CAMPAIGNS} AS c ON c.campaign_id = i.campaign_id`,
    [refs.map((ref) => ref.campaignId), refs.map((ref) => ref.itemId)],
  );
  const byRef = new Map(found.rows.map((row) => [`${row.campaign_id}\n${row.item_id}`, row]));
  return refs.map((ref) => {
    const row = byRef.get(`${ref.campaignId.toLowerCase()}\n${ref.itemId}`);
    if (!row) return null;
    return {
      itemId: row.item_id,
      kind: row.kind as ReviewItem["kind"],
      groupUUID: row.group_uuid,
      groupDn: row.group_dn,
      memberUUID: row.member_uuid,
      memberDn: row.member_dn,
      attribute: row.attribute,
      accessFunction: row.access_function,
      reviewers: row.reviewers,
      since: row.since.toISOString(),
      began: row.began as ReviewItem["began"],
      lastReview: row.last_review as ReviewItem["lastReview"],
      campaignId: row.campaign_id,
      review: row.review,
    };
  });
}

/** Whether a review item's dialog data is a reference (version 2) rather than the item. */
export function isReviewItemRef(data: unknown): data is ReviewItemRef {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return false;
  const keys = Object.keys(data);
  const { campaignId, itemId } = data as Record<string, unknown>;
  return keys.length === 2 && typeof campaignId === "string" && typeof itemId === "string";
}
