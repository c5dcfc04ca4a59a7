import type { ActorRef, DialogEscalationPlan } from "../events/index.ts";
import type { Calendars } from "../time/index.ts";
import type { Escalation, EscalationAfter, EscalationAssignees } from "./define.ts";
import { recordError } from "./errors.ts";
import { deadline } from "./time.ts";
import { AnnalError } from "../errors/index.ts";

/** Who answers a dialog that its escalation chain ended with a final answer. */
export const ESCALATION_ACTOR: ActorRef = {
  accountId: "escalation",
  name: "the escalation chain",
  dn: null,
};

/**
 * The moments of a dialog's escalation chain, computed once when it opens: each level after
 * the previous one (the first after `openedAt`), and the chain's end after the last level,
 * which is the dialog's deadline (`cap`, the dialog's own `until`, still bounds it).
 */
export function planEscalation(
  escalation: Escalation,
  openedAt: Date,
  cap: string | null,
  calendars: Calendars | undefined,
): { readonly plan: DialogEscalationPlan; readonly until: string | null } {
  if (escalation.levels.length === 0 && !escalation.final) {
    throw new AnnalError("WF_VALIDATION", "escalation: give at least one level or a final", {
      hint: 'write escalation: { levels: [{ after: "3bd", assignees: [...] }] }',
    });
  }
  let from = openedAt;
  const levels = escalation.levels.map((level, index) => {
    from = new Date(after(level.after, from, calendars, `escalation level ${index + 1}`));
    return { at: from.toISOString(), mode: level.mode ?? "reassign" };
  });
  const end = escalation.final
    ? after(escalation.final.after, from, calendars, "escalation final")
    : null;
  const until = end === null ? cap : cap === null ? end : end < cap ? end : cap;
  const plan: DialogEscalationPlan =
    escalation.final?.answer === undefined
      ? { levels }
      : { levels, finalAnswer: escalation.final.answer };
  return { plan, until };
}

/** A duration or business time after `from`; a moment is refused (the chain is relative). */
function after(
  value: EscalationAfter,
  from: Date,
  calendars: Calendars | undefined,
  what: string,
): string {
  if (value instanceof Date || (typeof value === "string" && /^\d{4}-\d{2}-\d{2}T/.test(value))) {
    throw new AnnalError("WF_VALIDATION", `${what}: "after" is a duration, not a moment`, {
      hint: 'write e.g. "2d", "3bd" or { businessDays: 2 }',
    });
  }
  return deadline(value, from, null, calendars)!;
}

/**
 * The assignees from a level on: the level's own (read by its function, if it is one), in
 * place of or beside `current`. A level whose function fails or finds nobody leaves the
 * assignees as they were, with the reason recorded: a dialog always has someone to answer.
 */
export async function escalatedAssignees(
  assignees: EscalationAssignees,
  mode: "reassign" | "add",
  current: readonly string[],
  bindings: () => Promise<Readonly<Record<string, unknown>>>,
): Promise<{
  readonly assignees: readonly string[];
  readonly error?: ReturnType<typeof recordError>;
}> {
  let found: readonly string[];
  try {
    found =
      typeof assignees === "function" ? await assignees({ bindings: await bindings() }) : assignees;
    if (!Array.isArray(found) || found.some((each) => typeof each !== "string" || each === "")) {
      throw new AnnalError(
        "WF_VALIDATION",
        "an escalation level's assignees must be a list of principals",
      );
    }
  } catch (error) {
    return { assignees: current, error: recordError(error) };
  }
  if (found.length === 0) {
    return {
      assignees: current,
      error: recordError(
        new AnnalError("WF_VALIDATION", "the escalation level found nobody to ask"),
      ),
    };
  }
  return { assignees: mode === "add" ? [...new Set([...current, ...found])] : [...found] };
}

/**
 * An escalation level that asks the manager of `dn`, as the directory names it when the level
 * is reached (`manager` of the entry, read through the definition's directory binding).
 *
 * @example
 * escalation: { levels: [{ after: "2bd", assignees: managerOf(owner) }] }
 */
export function managerOf(dn: string, binding = "directory"): EscalationAssignees {
  return async ({ bindings }) => {
    const directory = bindings[binding] as
      | { get(dn: string, options?: { attributes?: readonly string[] }): Promise<unknown> }
      | undefined;
    if (!directory || typeof directory.get !== "function") {
      throw new AnnalError("WF_VALIDATION", `managerOf: the binding "${binding}" is no directory`, {
        hint: 'declare bindings: { directory: bind.directory() } or name the binding: managerOf(dn, "<binding>")',
      });
    }
    const entry = (await directory.get(dn, { attributes: ["manager"] })) as
      { readonly attributes?: Readonly<Record<string, unknown>> } | undefined;
    const manager = entry?.attributes?.["manager"];
    const values = Array.isArray(manager) ? manager : manager === undefined ? [] : [manager];
    return values.map(String);
  };
}
