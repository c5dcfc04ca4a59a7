import { assertAccess } from "../../auth/index.ts";
import { AnnalError } from "../../errors/index.ts";
import type { ReviewCampaignRow } from "../../../projections/reviews/index.ts";
import {
  campaignReport,
  decisionKeysNow,
  decideItems,
  readCampaign,
  readCampaigns,
  readItem,
  readItems,
  readProgress,
  reviewsOfMembership,
  startCampaign,
  unreviewedMemberships,
  type ReviewItemView,
} from "../../reviews/index.ts";
import { REVIEWS_PROJECTION } from "../../../projections/reviews/index.ts";
import { waitForProjection } from "../../projector/index.ts";
import { readMoment } from "../../time/index.ts";
import { databaseClock, seesAll } from "../../workflow/index.ts";
import type { GatewayContext } from "../context.ts";
import { BadUserInputError } from "../errors.ts";
import { actorOf, commandActor, engineOf } from "./engine.ts";

/**
 * The access review operations of `schema/reviews.graphql`, read through the reviews module.
 * Operators and auditors see every campaign and item; anyone else the items they may decide now.
 */

const notFound = (what: string) => new AnnalError("ANNAL_REVIEW_NOT_FOUND", `no ${what}`);

function itemNode(item: ReviewItemView, now: Date) {
  const ref = (value: { accountId: string; name: string; dn: string | null } | null) =>
    value && { id: value.accountId, name: value.name, dn: value.dn };
  const error = item.revocation_error as { code: string; message: string; name: string } | null;
  return {
    id: item.item_id,
    campaignId: item.campaign_id,
    kind: item.kind,
    group: item.group_dn,
    member: item.member_dn,
    accessFunction: item.access_function,
    since: item.since.toISOString(),
    heldDays: Math.max(
      0,
      Math.floor(((item.decided_at ?? now).getTime() - item.since.getTime()) / 86_400_000),
    ),
    began: item.began,
    lastReview: item.last_review,
    reviewers: item.reviewers,
    assignees: item.assignees,
    state: item.state,
    overdue: item.overdue,
    escalated: item.escalation_level !== null,
    decision: item.decision,
    reason: item.reason,
    decidedBy: ref(item.decided_by),
    decidedFor: ref(item.decided_for),
    decidedAt: item.decided_at?.toISOString() ?? null,
    decisionPosition: item.decision_position === null ? null : Number(item.decision_position),
    revocation: item.revocation,
    revocationError: error,
    directoryChange:
      item.change_position === null
        ? null
        : { position: Number(item.change_position), at: item.change_at?.toISOString() ?? null },
    instanceId: item.instance_id,
  };
}

/**
 * Read-your-writes: a command's answer shows what it did, so it waits (bounded) for the reviews
 * projection to apply everything the log holds now.
 */
async function caughtUp(context: GatewayContext): Promise<void> {
  const engine = engineOf(context);
  await waitForProjection(engine.pool, REVIEWS_PROJECTION, await engine.store.head(), 10_000);
}

function campaignNode(context: GatewayContext, row: ReviewCampaignRow) {
  const pool = engineOf(context).pool;
  const actor = actorOf(context.viewer);
  return {
    id: row.campaign_id,
    review: row.review,
    title: row.title,
    startedAt: row.started_at.toISOString(),
    deadline: row.deadline.toISOString(),
    startedBy: { id: row.started_by.accountId, name: row.started_by.name, dn: row.started_by.dn },
    unreviewable: row.unreviewable,
    progress: async () => readProgress(pool, row.campaign_id, await databaseClock(pool)),
    items: async (args: Record<string, unknown>) => {
      const first = typeof args.first === "number" ? Math.min(Math.max(args.first, 1), 500) : 100;
      const after = typeof args.after === "string" ? Number(args.after) : undefined;
      const mine = args.mine === true || !seesAll(actor);
      // The reviewer's keys with the clock in one statement.
      const { now, keys } = await decisionKeysNow(pool, mine ? actor : undefined);
      const visible = await readItems(pool, row.campaign_id, now, {
        ...(typeof args.state === "string" ? { state: args.state as "open" } : {}),
        ...(typeof args.overdue === "boolean" ? { overdue: args.overdue } : {}),
        ...(typeof args.group === "string" ? { group: args.group } : {}),
        ...(typeof args.member === "string" && args.member.trim() !== ""
          ? { member: args.member.trim() }
          : {}),
        ...(after !== undefined && Number.isSafeInteger(after) ? { after } : {}),
        ...(keys ? { assignedTo: keys } : {}),
        first: first + 1,
      });
      const page = visible.slice(0, first);
      return {
        nodes: page.map((item) => itemNode(item, now)),
        pageInfo: {
          hasNextPage: visible.length > first,
          hasPreviousPage: after !== undefined,
          startCursor: page[0] ? String(page[0].ordinal) : null,
          endCursor: page.at(-1) ? String(page.at(-1)!.ordinal) : null,
        },
      };
    },
  };
}

function assertSeesAll(context: GatewayContext) {
  const actor = actorOf(context.viewer);
  if (!seesAll(actor)) assertAccess(context.viewer, "auditor");
}

export async function reviewCampaigns(context: GatewayContext, args: Record<string, unknown>) {
  const pool = engineOf(context).pool;
  const rows = await readCampaigns(
    pool,
    typeof args.review === "string" ? { review: args.review } : {},
  );
  return rows.map((row) => campaignNode(context, row));
}

export async function reviewCampaign(context: GatewayContext, args: Record<string, unknown>) {
  const row = await readCampaign(engineOf(context).pool, String(args.id));
  return row ? campaignNode(context, row) : null;
}

export async function membershipReviews(context: GatewayContext, args: Record<string, unknown>) {
  assertSeesAll(context);
  const pool = engineOf(context).pool;
  const now = await databaseClock(pool);
  const items = await reviewsOfMembership(pool, String(args.member), String(args.group), now);
  const out = [];
  for (const item of items) {
    const campaign = await readCampaign(pool, item.campaign_id);
    if (campaign)
      out.push({ campaign: campaignNode(context, campaign), item: itemNode(item, now) });
  }
  return out;
}

export async function unreviewed(context: GatewayContext, args: Record<string, unknown>) {
  assertSeesAll(context);
  const pool = engineOf(context).pool;
  const now = await databaseClock(pool);
  let since = new Date(now.getTime() - 365 * 86_400_000);
  if (typeof args.since === "string") {
    const read = readMoment(args.since, context.clock());
    if (!("moment" in read) || read.moment === undefined) {
      throw new BadUserInputError("Invalid since", {
        argument: "since",
        hint: "a moment as docs/time.md writes them: 2026-01-01T00:00:00Z, now-365d",
      });
    }
    since = read.moment;
  }
  const first = typeof args.first === "number" ? Math.min(Math.max(args.first, 1), 1000) : 100;
  const offset = typeof args.offset === "number" ? Math.max(args.offset, 0) : 0;
  const rows = await unreviewedMemberships(pool, since, { first, offset });
  return rows.map((row) => ({
    group: row.groupDn,
    member: row.memberDn,
    lastReviewedAt: row.lastReviewedAt?.toISOString() ?? null,
  }));
}

export async function reviewReport(context: GatewayContext, args: Record<string, unknown>) {
  assertSeesAll(context);
  if (!context.reviews) throw notFound("review is configured");
  return campaignReport(
    engineOf(context).pool,
    String(args.campaignId),
    await context.reviews.signingKey(),
  );
}

export async function startReview(context: GatewayContext, args: Record<string, unknown>) {
  const engine = engineOf(context);
  const actor = commandActor(context.viewer);
  assertAccess(context.viewer, "operator");
  const definition = context.reviews?.definitions.find((d) => d.name === args.review);
  if (!definition) {
    throw new AnnalError(
      "ANNAL_REVIEW_NOT_CONFIGURED",
      `no [[reviews]] table is named ${JSON.stringify(args.review)}`,
    );
  }
  const started = await startCampaign(engine, definition, { as: actor });
  // The campaign and its items, not every instance's start after them: at 100,000 items the
  // reviews projection applies those for minutes after the start has recorded them all.
  await waitForProjection(engine.pool, REVIEWS_PROJECTION, started.listed, 10_000);
  const row = await readCampaign(engine.pool, started.campaignId);
  if (!row) throw notFound(`campaign ${started.campaignId}`);
  return campaignNode(context, row);
}

export async function decide(context: GatewayContext, args: Record<string, unknown>) {
  const engine = engineOf(context);
  const actor = commandActor(context.viewer);
  const campaignId = String(args.campaignId);
  const decisions = (Array.isArray(args.decisions) ? args.decisions : []) as {
    itemId: string;
    decision: string;
    reason?: string | null;
  }[];
  if (decisions.length === 0 || decisions.length > 500) {
    throw new BadUserInputError("Invalid decisions", {
      argument: "decisions",
      hint: "give from 1 to 500 decisions a call",
    });
  }
  const outcomes = await decideItems(
    engine,
    campaignId,
    decisions.map((d) => ({
      itemId: d.itemId,
      decision: d.decision as "keep",
      ...(d.reason === null || d.reason === undefined ? {} : { reason: d.reason }),
    })),
    actor,
  );
  await caughtUp(context);
  const now = await databaseClock(engine.pool);
  return outcomes.map((outcome) => ({
    itemId: outcome.itemId,
    error: outcome.error,
    item: async () => {
      const item = await readItem(engine.pool, campaignId, outcome.itemId, now);
      return item ? itemNode(item, now) : null;
    },
  }));
}
