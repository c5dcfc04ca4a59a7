import type { ActorRef, RecordedError } from "../../events/index.ts";
import type {
  CallRecord,
  DialogEscalation,
  InstanceState,
} from "../../../projections/workflows/index.ts";

/**
 * An instance, its steps, its dialogs and its deadlines as every channel serves them: plain
 * data, times as ISO 8601 text. A channel maps these to its own shape and adds the links it
 * follows (an instance's parent, a step's child instance, a dialog's instance) by their ids.
 */

/** How far an instance is read: now, or as it was at a moment. */
export interface Moment {
  readonly at: Date | undefined;
  /** The moment the view is of (the database's clock when `at` is left out). */
  readonly asOf: Date;
}

export interface ActorView {
  readonly id: string;
  readonly name: string;
  readonly dn: string | null;
}

export interface ErrorView {
  readonly code: string;
  readonly message: string;
  readonly name: string;
}

export interface StepView {
  readonly seq: number;
  readonly kind: CallRecord["kind"];
  readonly name: string;
  readonly state: string;
  readonly attempts: number | null;
  readonly startedAt: string | null;
  readonly endedAt: string | null;
  readonly result: unknown;
  readonly error: ErrorView | null;
  readonly actingFor: ActorView | null;
  /** The child instance a `child` call started. */
  readonly childId: string | null;
}

export interface DialogView {
  readonly id: string;
  readonly instanceId: string;
  readonly workflow: string;
  readonly name: string;
  readonly assignees: readonly string[];
  readonly state: string;
  readonly form: unknown;
  readonly data: unknown;
  readonly until: string | null;
  readonly answer: unknown;
  readonly answeredBy: ActorView | null;
  /** The assignee `answeredBy` answered for through a delegation; null otherwise. */
  readonly answeredFor: ActorView | null;
  /** In a delegate's inbox: the person whose dialog it is; null in one's own. */
  readonly delegatedBy: ActorView | null;
  readonly openedAt: string | null;
  readonly endedAt: string | null;
  /** Its escalation chain and where it stands; null: it has none. */
  readonly escalation: EscalationView | null;
}

/** A level of a dialog's escalation chain: when it comes, and who it asked once it came. */
export interface EscalationLevelView {
  readonly at: string;
  readonly mode: "reassign" | "add";
  /** Who may answer from the level on; null before it came. */
  readonly assignees: readonly string[] | null;
  readonly reachedAt: string | null;
  /** Why the level asked nobody new (the assignees stayed as they were). */
  readonly error: ErrorView | null;
}

export interface EscalationView {
  /** How many levels have come (0: none yet; the level standing now is `levels[reached - 1]`). */
  readonly reached: number;
  readonly levels: readonly EscalationLevelView[];
  /** The chain's end: the dialog's deadline, and the answer it gives then (null: it times out). */
  readonly final: { readonly at: string; readonly answer: unknown } | null;
}

export interface DeadlineView {
  readonly kind: "instance" | "dialog" | "request" | "child" | "retry";
  readonly seq: number | null;
  readonly name: string | null;
  readonly dueAt: string | null;
  /** Whether it had passed at the view's moment. */
  readonly passed: boolean;
}

export interface InstanceView {
  readonly id: string;
  readonly workflow: string;
  readonly version: number;
  readonly hash: string;
  readonly state: InstanceState["status"];
  readonly parameters: unknown;
  readonly result: unknown;
  readonly error: ErrorView | null;
  readonly startedBy: ActorView | null;
  readonly startedAt: string | null;
  readonly updatedAt: string | null;
  readonly until: string | null;
  readonly asOf: string | null;
  readonly parentId: string | null;
  /** The version of the instance's stream the view was folded from. */
  readonly streamVersion: number;
  readonly steps: readonly StepView[];
  readonly dialogs: readonly DialogView[];
  readonly deadlines: readonly DeadlineView[];
}

/** ISO 8601 text of a time, null for none. */
export const iso = (date: Date | string | null | undefined): string | null =>
  date === null || date === undefined ? null : new Date(date).toISOString();

export function actorView(actor: ActorRef | null | undefined): ActorView | null {
  return actor ? { id: actor.accountId, name: actor.name, dn: actor.dn } : null;
}

function errorView(error: RecordedError | null | undefined): ErrorView | null {
  return error ? { code: error.code, message: error.message, name: error.name } : null;
}

/** The calls of an instance in the order it made them. */
export function callsOf(state: InstanceState): CallRecord[] {
  return [...state.calls.values()].sort((a, b) => a.seq - b.seq);
}

/** An instance as it was at `moment` (the state must be the one read for that moment). */
export function instanceView(state: InstanceState, moment: Moment): InstanceView {
  const calls = callsOf(state);
  return {
    id: state.id,
    workflow: state.definition.name,
    version: state.definition.version,
    hash: state.definition.hash,
    state: state.status,
    parameters: state.parameters,
    result: state.result ?? null,
    error: errorView(state.error),
    startedBy: actorView(state.startedBy),
    startedAt: iso(state.startedAt),
    updatedAt: iso(state.updatedAt),
    until: state.until,
    asOf: iso(moment.asOf),
    parentId: state.parent?.instanceId ?? null,
    streamVersion: state.version,
    steps: calls.map(stepView),
    dialogs: calls.flatMap((call) =>
      call.kind === "dialog" ? [dialogView(state.id, state.definition.name, call)] : [],
    ),
    deadlines: deadlinesOf(state, calls, moment.asOf),
  };
}

export function stepView(call: CallRecord): StepView {
  const base = { seq: call.seq, kind: call.kind, attempts: null, actingFor: null, childId: null };
  switch (call.kind) {
    case "step":
      return {
        ...base,
        name: call.name,
        state: call.state,
        attempts: call.attempts,
        startedAt: iso(call.startedAt),
        endedAt: iso(call.endedAt),
        result: call.result ?? null,
        error: errorView(call.error),
        actingFor: actorView(call.actingFor),
      };
    case "dialog":
      return {
        ...base,
        name: call.name,
        state: call.state,
        startedAt: iso(call.openedAt),
        endedAt: iso(call.endedAt),
        result: call.answer ?? null,
        error: null,
        actingFor: actorView(call.by),
      };
    case "request":
      return {
        ...base,
        name: call.name,
        state: call.state,
        startedAt: iso(call.sentAt),
        endedAt: iso(call.endedAt),
        result: call.answer ?? null,
        error: null,
      };
    case "child":
      return {
        ...base,
        name: call.definition.name,
        state: call.state,
        startedAt: iso(call.startedAt),
        endedAt: iso(call.endedAt),
        result: call.result ?? null,
        error: errorView(call.error),
        childId: call.childId,
      };
    case "value":
      return {
        ...base,
        name: call.valueKind,
        state: "recorded",
        startedAt: null,
        endedAt: null,
        result: call.value,
        error: null,
      };
  }
}

/** A dialog of instance `instanceId` of workflow `workflow`. */
export function dialogView(
  instanceId: string,
  workflow: string,
  call: Extract<CallRecord, { kind: "dialog" }>,
  delegatedBy: ActorRef | null = null,
): DialogView {
  return {
    id: call.dialogId,
    instanceId,
    workflow,
    name: call.name,
    assignees: call.assignees,
    state: call.state,
    form: call.form ?? null,
    data: call.data ?? null,
    until: call.until,
    answer: call.answer ?? null,
    answeredBy: actorView(call.by),
    answeredFor: actorView(call.for),
    delegatedBy: actorView(delegatedBy),
    openedAt: iso(call.openedAt),
    endedAt: iso(call.endedAt),
    escalation: call.escalation ? escalationView(call.escalation, call.until) : null,
  };
}

/** A dialog's chain as the fold (or the projection's `escalation` column) left it. */
export function escalationView(escalation: DialogEscalation, until: string | null): EscalationView {
  return {
    reached: escalation.reached,
    levels: escalation.levels.map((level) => ({
      at: level.at,
      mode: level.mode,
      assignees: level.assignees ?? null,
      reachedAt: iso(level.reachedAt),
      error: errorView(level.error),
    })),
    final: until === null ? null : { at: iso(until)!, answer: escalation.finalAnswer ?? null },
  };
}

/** What an instance waits for with a time limit: itself, its dialogs, requests, children, retries. */
function deadlinesOf(
  state: InstanceState,
  calls: readonly CallRecord[],
  now: Date,
): DeadlineView[] {
  const deadlines: {
    kind: DeadlineView["kind"];
    seq: number | null;
    name: string;
    dueAt: string;
  }[] = [];
  if (state.until) {
    deadlines.push({
      kind: "instance",
      seq: null,
      name: state.definition.name,
      dueAt: state.until,
    });
  }
  for (const call of calls) {
    if ((call.kind === "dialog" || call.kind === "request") && call.until) {
      deadlines.push({ kind: call.kind, seq: call.seq, name: call.name, dueAt: call.until });
    } else if (call.kind === "child" && call.until) {
      deadlines.push({
        kind: "child",
        seq: call.seq,
        name: call.definition.name,
        dueAt: call.until,
      });
    } else if (call.kind === "step" && call.state === "retrying" && call.retryAt) {
      deadlines.push({ kind: "retry", seq: call.seq, name: call.name, dueAt: call.retryAt });
    }
  }
  return deadlines.map((deadline) => ({
    ...deadline,
    dueAt: iso(deadline.dueAt),
    passed: new Date(deadline.dueAt).getTime() <= now.getTime(),
  }));
}
