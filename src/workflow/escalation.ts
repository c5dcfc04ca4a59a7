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
  checkEscalation(escalation);
  if (escalation.levels.length === 0 && !escalation.final) {
    throw optionsInvalid("escalation: give at least one level or a final");
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
    throw optionsInvalid(`${what}: "after" is a duration, not a moment`, AFTER_HINT);
  }
  return deadline(value, from, null, calendars)!;
}

const ESCALATION_SHAPE =
  '{ levels: [{ after: "2bd", assignees: ["<principal>", ...] or managerOf(dn), mode?: "reassign" | "add" }, ...], final?: { after: "1bd", answer?: <answer> } }';
const AFTER_HINT =
  'after is a duration or business time: "2d", "3bd", 3600000 or { businessDays: 2 }';

/** `WF_OPTIONS_INVALID` for `flow.dialog`'s escalation, with the shape it takes. */
function optionsInvalid(message: string, hint = `escalation takes ${ESCALATION_SHAPE}`) {
  return new AnnalError("WF_OPTIONS_INVALID", `flow.dialog: ${message}`, { hint });
}

/** What a value is, as a message names it: "a list", "null", "a string". */
function kindOf(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  if (value === null) return "null";
  if (value instanceof Date) return "a Date";
  return `${/^[aeiou]/.test(typeof value) ? "an" : "a"} ${typeof value}`;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);

function refuseOtherKeys(value: Record<string, unknown>, allowed: readonly string[], at: string) {
  const other = Object.keys(value).filter((key) => !allowed.includes(key));
  if (other.length > 0) {
    throw optionsInvalid(
      `${at} has no option ${other.map((key) => JSON.stringify(key)).join(", ")} (it takes ${allowed.join(", ")})`,
    );
  }
}

function checkAfter(value: unknown, at: string): void {
  if (typeof value === "string" || (typeof value === "number" && Number.isFinite(value))) return;
  if (isObject(value) && ("businessDays" in value || "businessHours" in value)) return;
  throw optionsInvalid(
    value === undefined ? `${at}.after is missing` : `${at}.after is ${kindOf(value)}`,
    AFTER_HINT,
  );
}

/**
 * Checks the shape of `flow.dialog`'s `escalation` where the engine first reads it (options
 * exist only when `run` calls `flow.dialog`, never at deploy): a value of another shape (a
 * list of levels instead of `{ levels }`) would otherwise fail deep in the engine with a
 * TypeError. Each refusal is `WF_OPTIONS_INVALID` naming the option and the shape it takes.
 * Durations are read later, with the run's clock and calendars (`after`).
 */
export function checkEscalation(value: unknown): asserts value is Escalation {
  if (!isObject(value)) {
    throw optionsInvalid(
      `escalation is ${kindOf(value)}, not an object${Array.isArray(value) ? " (put the levels in { levels: [...] })" : ""}`,
    );
  }
  refuseOtherKeys(value, ["levels", "final"], "escalation");
  const { levels, final } = value;
  if (!Array.isArray(levels)) {
    throw optionsInvalid(
      levels === undefined
        ? "escalation.levels is missing"
        : `escalation.levels is ${kindOf(levels)}, not a list`,
    );
  }
  levels.forEach((level: unknown, index) => {
    const at = `escalation.levels[${index}]`;
    if (!isObject(level)) throw optionsInvalid(`${at} is ${kindOf(level)}, not an object`);
    refuseOtherKeys(level, ["after", "assignees", "mode"], at);
    checkAfter(level.after, at);
    const { assignees, mode } = level;
    if (
      typeof assignees !== "function" &&
      !(
        Array.isArray(assignees) &&
        assignees.every((each) => typeof each === "string" && each !== "")
      )
    ) {
      throw optionsInvalid(
        `${at}.assignees is ${assignees === undefined ? "missing" : kindOf(assignees)}: it takes a list of principals (account ids, group DNs) or a function such as managerOf(dn)`,
      );
    }
    if (mode !== undefined && mode !== "reassign" && mode !== "add") {
      throw optionsInvalid(`${at}.mode is ${JSON.stringify(mode)}: it takes "reassign" or "add"`);
    }
  });
  if (final !== undefined) {
    if (!isObject(final))
      throw optionsInvalid(`escalation.final is ${kindOf(final)}, not an object`);
    refuseOtherKeys(final, ["after", "answer"], "escalation.final");
    checkAfter(final.after, "escalation.final");
  }
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
