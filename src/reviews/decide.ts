import type { Queryable } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";
import {
  completeDialog,
  dialogIdOf,
  WorkflowRefusal,
  type Actor,
  type EngineDeps,
} from "../workflow/index.ts";

export interface Decision {
  readonly itemId: string;
  readonly decision: "keep" | "revoke";
  readonly reason?: string | undefined;
}

export interface DecisionOutcome {
  readonly itemId: string;
  /** The instance that carries it out (its revocation step follows a revoke). */
  readonly instanceId: string | null;
  /** Null: decided. Otherwise why not: the engine's refusal, as GraphQL codes it. */
  readonly error: { readonly code: string; readonly message: string } | null;
}

/**
 * Decides items of a campaign, one or many at once: each is its dialog's answer
 * (`completeDialog`), checked by the engine as any answer (the actor must be a reviewer of the
 * item, its delegate, or an escalation's assignee; the reason the campaign asks for). Each item
 * is decided or refused on its own: a refusal names the item and does not undo the others.
 * A revocation is then the item instance's step, a directory write made as the reviewer.
 */
export async function decideItems(
  deps: EngineDeps,
  campaignId: string,
  decisions: readonly Decision[],
  as: Actor,
): Promise<DecisionOutcome[]> {
  const dialogs = await dialogsOf(
    deps.pool,
    campaignId,
    decisions.map((d) => d.itemId),
  );
  const outcomes: DecisionOutcome[] = [];
  for (const decision of decisions) {
    const item = dialogs.get(decision.itemId);
    if (!item?.dialog_id) {
      outcomes.push({
        itemId: decision.itemId,
        instanceId: item?.instance_id ?? null,
        error: {
          code: "ANNAL_REVIEW_NOT_FOUND",
          message: item
            ? `item ${decision.itemId} is not open for decisions yet`
            : `campaign ${campaignId} has no item ${decision.itemId}`,
        },
      });
      continue;
    }
    try {
      const answer = {
        decision: decision.decision,
        ...(decision.reason === undefined ? {} : { reason: decision.reason }),
      };
      const { instanceId } = await completeDialog(deps, {
        dialogId: item.dialog_id,
        answer,
        as,
      });
      outcomes.push({ itemId: decision.itemId, instanceId, error: null });
    } catch (error) {
      if (!(error instanceof WorkflowRefusal) && !(error instanceof AnnalError)) throw error;
      const code = error.code === "WF_VALIDATION" ? "ANNAL_REVIEW_DECISION_INVALID" : error.code;
      outcomes.push({
        itemId: decision.itemId,
        instanceId: item.instance_id,
        error: { code, message: error.message },
      });
    }
  }
  return outcomes;
}

/**
 * Each item's instance, by the key its start was made idempotent with, from the log itself (a
 * decision right after the campaign's start needs no projection to have caught up), and its
 * dialog: the item's code opens it with its first call.
 */
async function dialogsOf(
  db: Queryable,
  campaignId: string,
  itemIds: readonly string[],
): Promise<Map<string, { dialog_id: string | null; instance_id: string | null }>> {
  const keys = itemIds.map((itemId) => `workflow-start:review:${campaignId}:${itemId}`);
  const found = await db.query<{ idempotency_key: string; instance_id: string }>(
    `SELECT idempotency_key, data->>'instanceId' AS instance_id FROM events
      WHERE idempotency_key = ANY($1::text[])`,
    [keys],
  );
  const byKey = new Map(found.rows.map((row) => [row.idempotency_key, row.instance_id]));
  const dialogs = new Map<string, { dialog_id: string | null; instance_id: string | null }>();
  for (const [index, itemId] of itemIds.entries()) {
    const instanceId = byKey.get(keys[index]!);
    if (instanceId)
      dialogs.set(itemId, { instance_id: instanceId, dialog_id: dialogIdOf(instanceId, 1) });
  }
  return dialogs;
}
