/**
 * annal's built-in workflow `annal.review-item`: one item of an access review campaign. It is
 * deployed like any definition (bundled, stored by its hash, replayed from its stored bundle),
 * so a campaign's items are instances, their decisions dialogs, their escalations and
 * delegations the engine's own, and a revocation is a step whose directory write names the
 * instance, the step and the reviewer. It imports only `annal`, so its bundle, and with it its
 * hash, changes only when this file does: raise `version` with every change.
 *
 * Version 2 records the item once: its dialog's data is a reference to it (`ReviewItemRef`),
 * which the dialog's readers show as the item the reviews projection lists (`reviewItemData`),
 * and its parameters no longer carry it (version 1 carried it in both, twice the item's bytes
 * for each of a campaign's 100,000 items). Instances of version 1 replay their own stored code.
 */
import { bind, defineWorkflow, TimeoutError, type EscalationLevel } from "annal";

/** What a start of an item gives (built by the campaign's start, never by people). */
export interface ReviewItemParameters {
  readonly campaignId: string;
  readonly itemId: string;
  readonly groupDn: string;
  readonly memberDn: string;
  readonly attribute: string;
  readonly reviewers: readonly string[];
  /** ISO 8601: the campaign's deadline. */
  readonly until: string;
  readonly escalation: readonly {
    readonly after: string;
    readonly to: readonly string[];
    readonly mode: "reassign" | "add";
  }[];
  readonly calendar: string | null;
  readonly undecided: "keep" | "revoke";
  readonly reasonRequiredForKeep: boolean;
}

/**
 * The data of an item's dialog: which item it decides. Readers show the item and its history
 * from the reviews projection in its place (the campaign's `ReviewItemsListed` records it).
 */
export interface ReviewItemRef {
  readonly campaignId: string;
  readonly itemId: string;
}

/** A reviewer's answer. */
export interface ReviewDecision {
  readonly decision: "keep" | "revoke";
  readonly reason?: string;
}

type Issue = { readonly message: string; readonly path?: readonly string[] };

/** A Standard Schema by hand: the bundle carries no schema library (its hash would follow it). */
function standard<T>(check: (value: unknown) => readonly Issue[], jsonSchema: unknown) {
  return {
    "~standard": {
      version: 1 as const,
      vendor: "annal",
      validate: (value: unknown) => {
        const issues = check(value);
        return issues.length > 0 ? { issues } : { value: value as T };
      },
      jsonSchema: { input: () => jsonSchema, output: () => jsonSchema },
      // Types only (Standard Schema's `types`): what validation gives.
      types: undefined as unknown as { readonly input: unknown; readonly output: T },
    },
  };
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const parameters = standard<ReviewItemParameters>(
  (value) =>
    isObject(value) &&
    typeof value.campaignId === "string" &&
    typeof value.itemId === "string" &&
    typeof value.groupDn === "string" &&
    typeof value.memberDn === "string" &&
    Array.isArray(value.reviewers) &&
    typeof value.until === "string"
      ? []
      : [{ message: "the parameters of a review item are made by its campaign" }],
  { type: "object" },
);

/** Keep or revoke; a reason to revoke always, to keep where the campaign says so. */
function decisionSchema(reasonRequiredForKeep: boolean) {
  return standard<ReviewDecision>(
    (value) => {
      if (!isObject(value)) return [{ message: "expected { decision, reason }" }];
      const { decision, reason } = value;
      if (decision !== "keep" && decision !== "revoke") {
        return [{ message: 'decision must be "keep" or "revoke"', path: ["decision"] }];
      }
      if (reason !== undefined && typeof reason !== "string") {
        return [{ message: "reason must be a text", path: ["reason"] }];
      }
      const given = typeof reason === "string" && reason.trim() !== "";
      if (decision === "revoke" && !given) {
        return [{ message: "a revocation needs a reason", path: ["reason"] }];
      }
      if (decision === "keep" && reasonRequiredForKeep && !given) {
        return [{ message: "this campaign needs a reason to keep an item", path: ["reason"] }];
      }
      return [];
    },
    {
      type: "object",
      required: reasonRequiredForKeep ? ["decision", "reason"] : ["decision"],
      properties: {
        decision: { title: "Decision", enum: ["keep", "revoke"] },
        reason: { title: "Reason", type: "string" },
      },
    },
  );
}

export default defineWorkflow({
  name: "annal.review-item",
  version: 2,
  title: "Access review item",
  parameters,
  bindings: { directory: bind.directory() },
  // Started by a campaign only: nobody's catalog offers it.
  access: { start: ["annal.review-campaign"] },
  async run(flow, p) {
    const levels: EscalationLevel[] = p.escalation.map((level) => ({
      after:
        /bd|bh/.test(level.after) && p.calendar
          ? businessAfter(level.after, p.calendar)
          : level.after,
      assignees: [...level.to],
      mode: level.mode,
    }));
    let decided;
    try {
      decided = await flow.dialog({
        name: "review",
        assignees: p.reviewers,
        schema: decisionSchema(p.reasonRequiredForKeep),
        until: p.until,
        data: { campaignId: p.campaignId, itemId: p.itemId } satisfies ReviewItemRef,
        ...(levels.length > 0 ? { escalation: { levels } } : {}),
      });
    } catch (error) {
      if (!(error instanceof TimeoutError)) throw error;
      // Nobody decided by the deadline: what the campaign says becomes of it.
      if (p.undecided === "revoke") {
        const removed = await flow.step("revoke undecided", ({ bindings }) =>
          revoke(bindings.directory, p),
        );
        return { decision: "revoke", undecided: true, removed };
      }
      return { decision: "keep", undecided: true, removed: false };
    }
    const { answer, by } = decided;
    if (answer.decision === "revoke") {
      const removed = await flow.step("revoke", ({ bindings }) => revoke(bindings.directory, p), {
        as: by,
      });
      return { decision: "revoke", undecided: false, removed };
    }
    return { decision: "keep", undecided: false, removed: false };
  },
});

/** `"3bd"` in a named calendar. */
function businessAfter(after: string, calendar: string) {
  const days = /(\d+)bd/.exec(after)?.[1];
  const hours = /(\d+)bh/.exec(after)?.[1];
  return {
    businessDays: Number(days ?? 0),
    ...(hours ? { businessHours: Number(hours) } : {}),
    calendar,
  };
}

/**
 * Removes the member from the group; true when this removed it, false when it was gone
 * already (a step runs at least once: a retry after a write that was made finds it gone).
 */
async function revoke(
  directory: {
    get(
      dn: string,
      options?: { attributes?: readonly string[] },
    ): Promise<{ attributes: Record<string, unknown> } | undefined>;
    modify(
      dn: string,
      changes: readonly { operation: "delete"; attribute: string; values: string[] }[],
    ): Promise<void>;
  },
  p: ReviewItemParameters,
): Promise<boolean> {
  const group = await directory.get(p.groupDn, { attributes: [p.attribute] });
  const values = (group?.attributes[p.attribute] ?? []) as readonly unknown[];
  const held = values.find((value) => String(value).toLowerCase() === p.memberDn.toLowerCase());
  if (held === undefined) return false;
  await directory.modify(p.groupDn, [
    { operation: "delete", attribute: p.attribute, values: [String(held)] },
  ]);
  return true;
}
