import {
  REVIEW_ITEM_WORKFLOW,
  type RecordedAnnalEvent,
  type ReviewItem,
} from "../../src/events/index.ts";
import type { Projection, ProjectionContext } from "../../src/projector/index.ts";
import { canonicalPrincipal, stateFromJson } from "../workflows/index.ts";
import { REVIEWS_PROJECTION, reviewTables } from "./tables.ts";

const HANDLES = [
  "ReviewCampaignStarted",
  "ReviewItemsListed",
  "WorkflowStarted",
  "DialogOpened",
  "DialogEscalated",
  "DialogCompleted",
  "StepScheduled",
  "StepCompleted",
  "StepFailed",
  "WorkflowCompleted",
  "WorkflowRetried",
  "WorkflowCheckpointed",
] as const;
type Handled = (typeof HANDLES)[number];

/** The revocation steps of `annal.review-item`. */
const REVOKE_STEPS = new Set(["revoke", "revoke undecided"]);

/**
 * `reviews`: access review campaigns (`review_campaigns`) and their items (`review_items`),
 * from the campaigns' own events and the events of their items' instances of the built-in
 * workflow `annal.review-item` (its dialog is the decision, its step the revocation). Events of
 * other instances touch no row (their instance ids are in no item).
 */
export const reviewsProjection: Projection<Handled> = {
  name: REVIEWS_PROJECTION,
  version: 3,
  handles: HANDLES,
  tables: reviewTables,
  async apply(events, context) {
    // A campaign's items' instances start 500 a transaction, each with its dialog opened
    // (`startWorkflows` until the first wait): their WorkflowStarted and DialogOpened, one
    // after another in the log, are applied as one UPDATE a run (one each took minutes at
    // 100,000 items).
    let started = new Map<string, Started>();
    const flush = async () => {
      if (started.size === 0) return;
      const rows = [...started.values()];
      await context.tx.query(
        `UPDATE ${context.table("review_items")} AS i SET instance_id = s.instance_id,
                position = s.position, dialog_id = coalesce(s.dialog_id, i.dialog_id),
                assignees = CASE WHEN s.assignees IS NULL THEN i.assignees
                                 ELSE ARRAY(SELECT jsonb_array_elements_text(s.assignees)) END
           FROM unnest($1::uuid[], $2::bigint[], $3::uuid[], $4::text[], $5::text[], $6::jsonb[])
                AS s(instance_id, position, campaign_id, item_id, dialog_id, assignees)
          WHERE i.campaign_id = s.campaign_id AND i.item_id = s.item_id`,
        [
          rows.map((s) => s.instanceId),
          rows.map((s) => s.position),
          rows.map((s) => s.campaignId),
          rows.map((s) => s.itemId),
          rows.map((s) => s.dialogId),
          rows.map((s) => (s.assignees === null ? null : JSON.stringify(s.assignees))),
        ],
      );
      started = new Map();
    };
    for (const event of events) {
      if (event.type === "WorkflowStarted") {
        const d = (event as RecordedAnnalEvent<"WorkflowStarted">).data;
        if (d.definition.name !== REVIEW_ITEM_WORKFLOW) continue;
        const p = d.parameters as { campaignId?: string; itemId?: string };
        if (typeof p.campaignId !== "string" || typeof p.itemId !== "string") continue;
        const instanceId = event.streamId.slice("workflow-".length);
        started.set(instanceId, {
          instanceId,
          position: event.position,
          campaignId: p.campaignId,
          itemId: p.itemId,
          dialogId: null,
          assignees: null,
        });
        continue;
      }
      const run = started.get(event.streamId.slice("workflow-".length));
      if (event.type === "DialogOpened" && run) {
        const d = (event as RecordedAnnalEvent<"DialogOpened">).data;
        run.position = event.position;
        run.dialogId = d.dialogId;
        run.assignees = d.assignees.map(canonicalPrincipal);
        continue;
      }
      await flush();
      await applyOne(event, context);
    }
    await flush();
  },
};

/** An item's instance started in a run of starts, and its dialog where it opened with it. */
interface Started {
  readonly instanceId: string;
  position: number;
  readonly campaignId: string;
  readonly itemId: string;
  dialogId: string | null;
  assignees: string[] | null;
}

async function applyOne(event: RecordedAnnalEvent<Handled>, { tx, table }: ProjectionContext) {
  const items = table("review_items");
  const instanceId = event.streamId.startsWith("workflow-")
    ? event.streamId.slice("workflow-".length)
    : null;
  const update = (set: string, params: unknown[]) =>
    tx.query(`UPDATE ${items} SET ${set}, position = $2 WHERE instance_id = $1`, [
      instanceId,
      event.position,
      ...params,
    ]);
  switch (event.type) {
    case "ReviewCampaignStarted": {
      const d = event.data;
      await tx.query(
        `INSERT INTO ${table("review_campaigns")} (campaign_id, review, title, definition,
           started_at, deadline, started_by, item_count, unreviewable, position)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          d.campaignId,
          d.review,
          d.title,
          JSON.stringify(d.definition),
          d.startedAt,
          d.deadline,
          JSON.stringify(d.startedBy),
          d.itemCount,
          JSON.stringify(d.unreviewable),
          event.position,
        ],
      );
      return;
    }
    case "ReviewItemsListed": {
      const { campaignId, items: listed } = event.data;
      const first = await tx.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${items} WHERE campaign_id = $1`,
        [campaignId],
      );
      const start = first.rows[0]?.n ?? 0;
      await tx.query(
        `INSERT INTO ${items} (campaign_id, item_id, ordinal, kind, group_uuid, group_dn,
           member_uuid, member_dn, member_norm, attribute, access_function, reviewers, since,
           began, last_review, position)
         SELECT $1, i."itemId", $3 + o - 1, i.kind, i."groupUUID", i."groupDn", i."memberUUID",
                i."memberDn", lower(i."memberDn"), i.attribute, i."accessFunction",
                ARRAY(SELECT jsonb_array_elements_text(x.value -> 'reviewers')), i.since,
                x.value -> 'began', x.value -> 'lastReview', $2
           FROM jsonb_array_elements($4::jsonb) WITH ORDINALITY AS x(value, o),
                jsonb_to_record(x.value) AS i("itemId" text, kind text, "groupUUID" uuid,
                  "groupDn" text, "memberUUID" uuid, "memberDn" text, attribute text,
                  "accessFunction" text, since timestamptz)`,
        [campaignId, event.position, start, JSON.stringify(listed satisfies readonly ReviewItem[])],
      );
      return;
    }
    case "DialogOpened":
      await update("dialog_id = $3, assignees = $4", [
        event.data.dialogId,
        event.data.assignees.map(canonicalPrincipal),
      ]);
      return;
    case "DialogEscalated":
      await update("escalation_level = $3, assignees = $4", [
        event.data.level,
        event.data.assignees.map(canonicalPrincipal),
      ]);
      return;
    case "DialogCompleted": {
      const answer = (event.data.answer ?? {}) as { decision?: string; reason?: string };
      await update(
        `state = 'decided', decision = $3, reason = $4, decided_by = $5, decided_for = $6,
         decided_at = $7, decision_position = $2`,
        [
          answer.decision ?? null,
          answer.reason ?? null,
          JSON.stringify(event.data.by),
          event.data.for ? JSON.stringify(event.data.for) : null,
          event.occurredAt,
        ],
      );
      return;
    }
    case "StepScheduled":
      if (!REVOKE_STEPS.has(event.data.name)) return;
      await update(
        `revocation = CASE WHEN revocation IS NULL OR revocation = 'pending' THEN 'pending' ELSE 'retrying' END`,
        [],
      );
      return;
    case "StepCompleted":
      if (!REVOKE_STEPS.has(event.data.name)) return;
      await update("revocation = $3, revocation_error = NULL", [
        event.data.result === true ? "done" : "gone",
      ]);
      return;
    case "StepFailed":
      if (!REVOKE_STEPS.has(event.data.name)) return;
      await update("revocation = $3, revocation_error = $4", [
        event.data.retryAt === null ? "failed" : "retrying",
        JSON.stringify(event.data.error),
      ]);
      return;
    case "WorkflowRetried":
      await update(
        "revocation = CASE WHEN revocation = 'failed' THEN 'retrying' ELSE revocation END",
        [],
      );
      return;
    case "WorkflowCheckpointed":
      await applyCheckpoint(event.data.state, instanceId, event.position, { tx, table });
      return;
    case "WorkflowCompleted": {
      // The item's outcome: its revocation's (a step's completion may be carried by the
      // instance's next event rather than a StepCompleted of its own), and an undecided end.
      const result = (event.data.result ?? {}) as {
        decision?: string;
        undecided?: boolean;
        removed?: boolean;
      };
      if (result.decision === "revoke") {
        await update("revocation = $3, revocation_error = NULL", [
          result.removed === true ? "done" : "gone",
        ]);
      }
      if (result.undecided !== true) return;
      await update(`state = 'undecided', decision = $3, decided_at = $4, decision_position = $2`, [
        result.decision ?? "keep",
        event.occurredAt,
      ]);
      return;
    }
  }
}

/**
 * An item's instance folded by retention (`WorkflowCheckpointed`): its events replaced by its
 * state, from which the item is written as its events had left it (its decision's own event is
 * gone, so its log position is the checkpoint's).
 */
async function applyCheckpoint(
  json: unknown,
  instanceId: string | null,
  position: number,
  { tx, table }: ProjectionContext,
): Promise<void> {
  const state = stateFromJson(json);
  if (state.definition.name !== REVIEW_ITEM_WORKFLOW) return;
  const p = state.parameters as { campaignId?: string; itemId?: string };
  const calls = [...state.calls.values()];
  const dialog = calls.find((call) => call.kind === "dialog");
  const revoke = calls.find((call) => call.kind === "step" && REVOKE_STEPS.has(call.name));
  const result = (state.result ?? {}) as {
    decision?: string;
    undecided?: boolean;
    removed?: boolean;
  };
  const answer = (dialog?.kind === "dialog" ? (dialog.answer ?? {}) : {}) as {
    decision?: string;
    reason?: string;
  };
  const decided = dialog?.kind === "dialog" && dialog.state === "completed";
  const undecided = result.undecided === true;
  const reached = dialog?.kind === "dialog" ? (dialog.escalation?.reached ?? 0) : 0;
  const revocation =
    revoke?.kind !== "step"
      ? null
      : revoke.state === "completed"
        ? revoke.result === true
          ? "done"
          : "gone"
        : revoke.state === "failed"
          ? "failed"
          : revoke.state === "retrying"
            ? "retrying"
            : "pending";
  await tx.query(
    `UPDATE ${table("review_items")} SET instance_id = $3, dialog_id = $4, assignees = $5,
       escalation_level = $6,
       state = $7, decision = $8, reason = $9, decided_by = $10, decided_for = $11,
       decided_at = $12, decision_position = CASE WHEN $7 = 'open' THEN NULL ELSE $13::bigint END,
       revocation = $14, revocation_error = $15, position = $13
     WHERE campaign_id = $1 AND item_id = $2`,
    [
      p.campaignId,
      p.itemId,
      instanceId,
      dialog?.kind === "dialog" ? dialog.dialogId : null,
      dialog?.kind === "dialog" ? dialog.assignees.map(canonicalPrincipal) : [],
      reached > 0 ? reached - 1 : null,
      decided ? "decided" : undecided ? "undecided" : "open",
      decided ? (answer.decision ?? null) : undecided ? (result.decision ?? "keep") : null,
      decided ? (answer.reason ?? null) : null,
      decided && dialog?.kind === "dialog" && dialog.by ? JSON.stringify(dialog.by) : null,
      decided && dialog?.kind === "dialog" && dialog.for ? JSON.stringify(dialog.for) : null,
      decided && dialog?.kind === "dialog"
        ? (dialog.endedAt ?? state.updatedAt)
        : undecided
          ? state.updatedAt
          : null,
      position,
      revocation,
      revoke?.kind === "step" && revoke.error ? JSON.stringify(revoke.error) : null,
    ],
  );
}
