import { normalizeDN } from "../../src/directory/index.ts";
import type {
  ActorRef,
  DefinitionRef,
  InstanceEventType,
  RecordedAnnalEvent,
  RecordedError,
} from "../../src/events/index.ts";

/** An instance's state: the spec's ERRORED, and the others a user of an engine expects. */
export type InstanceStatus = "RUNNING" | "WAITING" | "COMPLETED" | "ERRORED" | "CANCELLED";

export const TERMINAL: ReadonlySet<InstanceStatus> = new Set(["COMPLETED", "CANCELLED"]);

/** One call of the run function, as its events left it. */
/** A dialog's escalation chain as its events leave it. */
export interface DialogEscalation {
  readonly levels: readonly {
    readonly at: string;
    readonly mode: "reassign" | "add";
    /** Who could answer once the level came (absent before it came). */
    readonly assignees?: readonly string[];
    /** When the level came (ISO 8601, as the event that recorded it was written). */
    readonly reachedAt?: string;
    readonly error?: RecordedError;
  }[];
  readonly reached: number;
  readonly finalAnswer?: unknown;
}

export type CallRecord =
  | {
      readonly kind: "step";
      readonly seq: number;
      readonly name: string;
      readonly attempts: number;
      /** `scheduled`: an attempt began and has no outcome yet (it may be running, or lost). */
      readonly state: "scheduled" | "completed" | "retrying" | "failed";
      readonly result?: unknown;
      readonly error?: RecordedError;
      /** When the next attempt runs (`retrying`). */
      readonly retryAt?: string;
      readonly actingFor: ActorRef | null;
      readonly startedAt: Date;
      readonly endedAt?: Date;
    }
  | {
      readonly kind: "value";
      readonly seq: number;
      readonly valueKind: "now" | "uuid" | "random";
      readonly value: string | number;
    }
  | {
      readonly kind: "dialog";
      readonly seq: number;
      readonly name: string;
      readonly dialogId: string;
      readonly assignees: readonly string[];
      readonly form: unknown;
      readonly data: unknown;
      readonly until: string | null;
      readonly state: "pending" | "completed" | "timed_out" | "cancelled";
      readonly answer?: unknown;
      readonly by?: ActorRef;
      /** The assignee `by` answered for through a delegation. */
      readonly for?: ActorRef | null;
      readonly openedAt: Date;
      /** Its escalation chain and where it stands (`reached`: the levels come so far). */
      readonly escalation?: DialogEscalation;
      readonly endedAt?: Date;
    }
  | {
      readonly kind: "request";
      readonly seq: number;
      readonly name: string;
      readonly key: string;
      readonly until: string | null;
      readonly state: "pending" | "answered" | "timed_out" | "cancelled";
      readonly answer?: unknown;
      readonly sentAt: Date;
      readonly endedAt?: Date;
    }
  | {
      readonly kind: "child";
      readonly seq: number;
      readonly childId: string;
      readonly definition: { readonly name: string; readonly version: number };
      readonly until: string | null;
      readonly state: "running" | "COMPLETED" | "ERRORED" | "CANCELLED" | "timed_out";
      readonly result?: unknown;
      readonly error?: RecordedError | null;
      readonly startedAt: Date;
      readonly endedAt?: Date;
    };

export interface InstanceState {
  readonly id: string;
  readonly definition: DefinitionRef;
  readonly parameters: unknown;
  readonly startedBy: ActorRef;
  readonly startedAt: Date;
  readonly until: string | null;
  readonly parent: { readonly instanceId: string; readonly seq: number } | null;
  readonly status: InstanceStatus;
  readonly result?: unknown;
  readonly error?: RecordedError;
  /** The call it ERRORED at, when it did at one. */
  readonly erroredAt?: number | null;
  readonly calls: ReadonlyMap<number, CallRecord>;
  /** The instance's own deadline passed. */
  readonly deadlinePassed: boolean;
  readonly updatedAt: Date;
  /** The stream's version the state is at. */
  readonly version: number;
}

export type InstanceEvent = RecordedAnnalEvent<InstanceEventType>;

/**
 * Folds an instance's events, in stream order, into its state: the one reading of an
 * instance's history that the engine (to resume it), the projections and reads `at` a past
 * moment share. Pure and deterministic.
 */
export function foldInstance(
  events: readonly InstanceEvent[],
  prior?: InstanceState,
): InstanceState | undefined {
  let state: Mutable<InstanceState> | undefined = prior && {
    ...prior,
    calls: new Map(prior.calls),
  };
  for (const event of events) {
    if (event.type === "WorkflowStarted") {
      const data = event.data;
      state = {
        id: data.instanceId,
        definition: data.definition,
        parameters: data.parameters,
        startedBy: data.startedBy,
        startedAt: event.occurredAt,
        until: data.until,
        parent: data.parent,
        status: "RUNNING",
        calls: new Map(),
        deadlinePassed: false,
        updatedAt: event.occurredAt,
        version: event.streamVersion,
      };
      continue;
    }
    if (event.type === "WorkflowCheckpointed") {
      // Retention folded the events before it into the state they left (docs/retention.md).
      const folded = stateFromJson(event.data.state);
      state = { ...folded, calls: new Map(folded.calls), version: event.streamVersion };
      continue;
    }
    if (!state) continue;
    apply(state, event);
    state.updatedAt = event.occurredAt;
    state.version = event.streamVersion;
  }
  // Once, not after each event: whether it waits looks at every call (after each event that
  // made a fold of n calls cost n², and an instance of a thousand steps replayed slowly).
  if (state && events.length > 0 && (state.status === "RUNNING" || state.status === "WAITING")) {
    state.status = waiting(state.calls) ? "WAITING" : "RUNNING";
  }
  return state;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function apply(state: Mutable<InstanceState>, event: InstanceEvent): void {
  const calls = state.calls as Map<number, CallRecord>;
  const at = event.occurredAt;
  switch (event.type) {
    case "StepScheduled": {
      const { seq, name, attempt, actingFor = null, completed } = event.data;
      // The step before's completion, when it rides along (one event a step).
      if (completed) completeStep(calls, completed.seq, completed.result ?? null, at);
      const before = calls.get(seq);
      calls.set(seq, {
        kind: "step",
        seq,
        name,
        attempts: attempt,
        state: "scheduled",
        actingFor,
        startedAt: before?.kind === "step" ? before.startedAt : at,
      });
      return;
    }
    case "StepCompleted":
      completeStep(calls, event.data.seq, event.data.result, at);
      return;
    case "StepFailed": {
      const call = calls.get(event.data.seq);
      if (call?.kind !== "step") return;
      const { retryAt, error } = event.data;
      calls.set(call.seq, {
        ...call,
        state: retryAt === null ? "failed" : "retrying",
        error,
        ...(retryAt === null ? { endedAt: at } : { retryAt }),
      });
      return;
    }
    case "FlowValueRecorded":
      calls.set(event.data.seq, {
        kind: "value",
        seq: event.data.seq,
        valueKind: event.data.kind,
        value: event.data.value,
      });
      return;
    case "DialogOpened": {
      const d = event.data;
      calls.set(d.seq, {
        kind: "dialog",
        seq: d.seq,
        name: d.name,
        dialogId: d.dialogId,
        assignees: d.assignees,
        form: d.form,
        data: d.data,
        until: d.until,
        state: "pending",
        openedAt: at,
        ...(d.escalation
          ? {
              escalation: {
                levels: d.escalation.levels,
                reached: 0,
                ...(d.escalation.finalAnswer === undefined
                  ? {}
                  : { finalAnswer: d.escalation.finalAnswer }),
              },
            }
          : {}),
      });
      return;
    }
    case "DialogEscalated": {
      const e = event.data;
      const call = calls.get(e.seq);
      if (call?.kind !== "dialog" || !call.escalation) return;
      const levels = call.escalation.levels.map((level, index) =>
        index === e.level
          ? {
              ...level,
              assignees: e.assignees,
              reachedAt: at.toISOString(),
              ...(e.error ? { error: e.error } : {}),
            }
          : level,
      );
      calls.set(call.seq, {
        ...call,
        assignees: e.assignees,
        escalation: { ...call.escalation, levels, reached: e.level + 1 },
      });
      return;
    }
    case "DialogCompleted": {
      const call = calls.get(event.data.seq);
      if (call?.kind !== "dialog") return;
      calls.set(call.seq, {
        ...call,
        state: "completed",
        answer: event.data.answer,
        by: event.data.by,
        for: event.data.for ?? null,
        endedAt: at,
      });
      return;
    }
    case "RequestSent": {
      const r = event.data;
      calls.set(r.seq, {
        kind: "request",
        seq: r.seq,
        name: r.name,
        key: r.key,
        until: r.until,
        state: "pending",
        sentAt: at,
      });
      return;
    }
    case "RequestAnswered": {
      const call = calls.get(event.data.seq);
      if (call?.kind !== "request") return;
      calls.set(call.seq, { ...call, state: "answered", answer: event.data.answer, endedAt: at });
      return;
    }
    case "ChildStarted": {
      const c = event.data;
      calls.set(c.seq, {
        kind: "child",
        seq: c.seq,
        childId: c.childId,
        definition: c.definition,
        until: c.until,
        state: "running",
        startedAt: at,
      });
      return;
    }
    case "ChildCompleted": {
      const call = calls.get(event.data.seq);
      if (call?.kind !== "child") return;
      calls.set(call.seq, {
        ...call,
        state: event.data.state,
        result: event.data.result,
        error: event.data.error,
        endedAt: at,
      });
      return;
    }
    case "DeadlinePassed": {
      const { seq } = event.data;
      if (seq === null) {
        state.deadlinePassed = true;
        return;
      }
      const call = calls.get(seq);
      if (call?.kind === "dialog" || call?.kind === "request" || call?.kind === "child") {
        calls.set(seq, { ...call, state: "timed_out", endedAt: at });
      }
      return;
    }
    case "WorkflowCompleted":
      state.status = "COMPLETED";
      state.result = event.data.result;
      return;
    case "WorkflowErrored":
      state.status = "ERRORED";
      state.error = event.data.error;
      state.erroredAt = event.data.seq;
      return;
    case "WorkflowCancelled":
      state.status = "CANCELLED";
      for (const [seq, call] of calls) {
        if ((call.kind === "dialog" || call.kind === "request") && call.state === "pending") {
          calls.set(seq, { ...call, state: "cancelled", endedAt: at });
        }
      }
      return;
    case "WorkflowRetried":
      // The call it failed at is tried anew: a step's attempts go on from where they stood.
      state.status = "RUNNING";
      delete state.error;
      for (const [seq, call] of calls) {
        if (call.kind === "step" && call.state === "failed") {
          calls.set(seq, { ...call, state: "retrying", retryAt: at.toISOString() });
        }
      }
      return;
  }
}

/** A step's completion: a `StepCompleted`, or a `StepScheduled`'s `completed`. */
function completeStep(
  calls: Map<number, CallRecord>,
  seq: number,
  result: unknown,
  at: Date,
): void {
  const call = calls.get(seq);
  if (call?.kind !== "step") return;
  calls.set(seq, { ...call, state: "completed", result, endedAt: at });
}

/** Whether the instance waits for something outside itself: an answer, a child, a retry. */
function waiting(calls: ReadonlyMap<number, CallRecord>): boolean {
  for (const call of calls.values()) {
    if (call.kind === "dialog" && call.state === "pending") return true;
    if (call.kind === "request" && call.state === "pending") return true;
    if (call.kind === "child" && call.state === "running") return true;
    if (call.kind === "step" && call.state === "retrying") return true;
  }
  return false;
}

/** The calls a `completeDialog` can reach: the instance's pending dialog with this id. */
export function pendingDialog(state: InstanceState, dialogId: string) {
  for (const call of state.calls.values()) {
    if (call.kind === "dialog" && call.dialogId === dialogId) return call;
  }
  return undefined;
}

/** An instance's state as JSON (for a projection to keep and fold on from). */
export function stateToJson(state: InstanceState): unknown {
  return { ...state, calls: [...state.calls.values()] };
}

const DATES = ["startedAt", "updatedAt", "openedAt", "sentAt", "endedAt"];

/** The state `stateToJson` wrote, with its dates and its map of calls back. */
export function stateFromJson(json: unknown): InstanceState {
  const revive = (value: Record<string, unknown>) => {
    const copy = { ...value };
    for (const key of DATES) {
      if (typeof copy[key] === "string") copy[key] = new Date(copy[key]);
    }
    return copy;
  };
  const raw = revive(json as Record<string, unknown>) as unknown as InstanceState & {
    calls: Record<string, unknown>[];
  };
  const calls = raw.calls.map((call) => revive(call) as unknown as CallRecord);
  return { ...raw, calls: new Map(calls.map((call) => [call.seq, call])) };
}

/**
 * A principal as assignees and principals are compared: a DN normalised (case, spacing,
 * escapes), anything else (`account:<id>`, a name) as it is.
 */
export function canonicalPrincipal(principal: string): string {
  if (!principal.includes("=")) return principal;
  try {
    return normalizeDN(principal);
  } catch {
    return principal.toLowerCase();
  }
}
