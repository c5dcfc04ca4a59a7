import { randomUUID } from "node:crypto";
import {
  annalEvent,
  type ActorRef,
  type AnnalEventMap,
  type AnnalEventType,
  type DialogEscalationPlan,
} from "../events/index.ts";
import { AnnalError } from "../errors/index.ts";
import {
  jsonSchemaOf,
  validate,
  type SchemaOutput,
  type StandardSchemaV1,
} from "../schema/index.ts";
import type { NewEvent } from "../store/index.ts";
import type { DialogOptions, Flow, RequestOptions, StepOptions, Until } from "./define.ts";
import {
  AssertionError,
  ChildFailedError,
  ReplayMismatchError,
  TimeoutError,
  ValidationError,
  errorFromRecord,
} from "./errors.ts";
import { runStep, type StepRunner } from "./step.ts";
import type { CallRecord, InstanceState } from "../../projections/workflows/index.ts";
import { deadline, passed } from "./time.ts";
import { ESCALATION_ACTOR, escalatedAssignees, planEscalation } from "./escalation.ts";
import type { Calendars } from "../time/index.ts";

/**
 * Thrown to unwind the run function when the instance must wait (a dialog, a retry, a child).
 * Not an Error, and once thrown every later call throws it again: code that catches it by
 * mistake cannot go on as if it had an answer.
 */
export class Suspend {
  readonly reason: string;
  constructor(reason: string) {
    this.reason = reason;
  }
}

/** What one run of the code decided besides the instance's own events. */
export interface Effects {
  /** Appends to other streams: a child's start, a child's cancellation. */
  readonly others: {
    streamId: string;
    events: NewEvent[];
    expectedVersion: number | "no_stream";
  }[];
  readonly timers: { instanceId: string; dueAt: string; reason: string }[];
  readonly wakes: string[];
}

/** What the replay needs from the engine. */
/**
 * A run that only looks: it replays up to call `seq` and hands over the schema the code gives
 * there (a dialog's answer schema, a request's), so a command can check an answer with the
 * definition's own schema before it records it. It never runs a step.
 */
export interface Probe {
  readonly seq: number;
  found(schema: StandardSchemaV1 | undefined): void;
}

export interface ReplayDeps extends StepRunner {
  /**
   * Parks the code at a wait instead of unwinding it: the promise settles when a later wake
   * resumes the run (`ReplayFlow.resume`). Undefined when the run cannot park (it unwinds).
   */
  park?(): Promise<void> | undefined;
  /** The calendars business-time deadlines count in. */
  readonly calendars?: Calendars | undefined;
  /** The child's definition at `version` (for its schema and deadline), or undefined. */
  childDefinition(
    name: string,
    version: number,
  ): Promise<{ hash: string; parameters: StandardSchemaV1; until?: Until } | undefined>;
  /** A child's status and outcome as its own stream has it now. */
  childOutcome(
    childId: string,
  ): Promise<{ status: string; version: number; result?: unknown } | undefined>;
}

/**
 * `flow` for one run of an instance's code: each call takes the next sequence number and
 * returns what the log recorded for it; the first call the log has no outcome for is where the
 * instance stands, and what it does there (run a step, open a dialog, start a child) is
 * appended, through `flush`, before any effect outside the log happens.
 */
export class ReplayFlow implements Flow<Record<string, unknown>> {
  readonly instanceId: string;
  readonly startedBy: ActorRef;
  readonly pending: NewEvent[] = [];
  readonly effects: Effects = { others: [], timers: [], wakes: [] };
  #seq = 0;
  #suspended: Suspend | undefined;
  /** A call is parked at a wait: no other call may be made until the run is resumed. */
  #waiting = false;
  #state: InstanceState;
  readonly #deps: ReplayDeps;
  #clock: () => Date;

  readonly #probe: Probe | undefined;
  /** The last dialog or request the code made, and the schema it gave (`schemaAt`). */
  #asked: { readonly seq: number; readonly schema: StandardSchemaV1 | undefined } | undefined;

  constructor(state: InstanceState, deps: ReplayDeps, clock: () => Date, probe?: Probe) {
    this.instanceId = state.id;
    this.startedBy = state.startedBy;
    this.#state = state;
    this.#deps = deps;
    this.#clock = clock;
    this.#probe = probe;
  }

  /** The last call's sequence number: where the code stands. */
  get seq(): number {
    return this.#seq;
  }

  get suspended(): Suspend | undefined {
    return this.#suspended;
  }

  /** A call waits, parked (see `ReplayDeps.park`). */
  get waiting(): boolean {
    return this.#waiting;
  }

  /** A parked run goes on against the instance's newer state (the waiting call is made again). */
  resume(state: InstanceState, clock: () => Date): void {
    this.#state = state;
    this.#clock = clock;
    this.#waiting = false;
  }

  /** Calls the log records beyond the last one the code made: a mismatch when it returns. */
  unmadeCalls(): number {
    return [...this.#state.calls.keys()].filter((seq) => seq > this.#seq).length;
  }

  record<T extends AnnalEventType>(type: T, data: AnnalEventMap[T]): void {
    this.pending.push(annalEvent(type, data));
  }

  async step<T>(
    name: string,
    fn: (context: never) => T | Promise<T>,
    options: StepOptions<T> = {},
  ): Promise<T> {
    const from = this.#seq;
    const again = () => this.step(name, fn, options);
    const seq = this.#next("step", name);
    const call = this.#state.calls.get(seq);
    if (call?.kind === "step") {
      if (call.state === "completed") return call.result as T;
      if (call.state === "failed") throw errorFromRecord(thrownFor(name, call));
      if (call.state === "retrying" && !passed(call.retryAt ?? null, this.#clock())) {
        return this.#wait(`step "${name}" retries at ${call.retryAt}`, from, again);
      }
    }
    if (this.#probe) this.#suspend("a probe runs no step");
    if (this.#deps.mustYield()) {
      // This advance has run its share: the instance is woken again, after others.
      this.effects.wakes.push(this.instanceId);
      return this.#wait("yields to other instances", from, again);
    }
    const outcome = await runStep(this.#deps, this, {
      seq,
      name,
      fn: fn as (context: unknown) => unknown,
      options,
      attempt: (call?.kind === "step" ? call.attempts : 0) + 1,
    });
    if (outcome.kind === "completed") return outcome.result as T;
    if (outcome.kind === "retry") {
      return this.#wait(`step "${name}" retries at ${outcome.retryAt}`, from, again);
    }
    throw errorFromRecord(outcome.thrown);
  }

  async dialog<D extends StandardSchemaV1>(
    options: DialogOptions<D>,
  ): ReturnType<Flow<Record<string, unknown>>["dialog"]> {
    const from = this.#seq;
    const again = () => this.dialog(options);
    const seq = this.#next("dialog", options.name);
    this.#probed(seq, options.schema);
    const call = this.#state.calls.get(seq);
    if (call?.kind !== "dialog") {
      const now = this.#clock();
      let until = deadline(options.until, now, this.#state.until, this.#deps.calendars);
      let escalation: DialogEscalationPlan | undefined;
      if (options.escalation) {
        ({ plan: escalation, until } = planEscalation(
          options.escalation,
          now,
          until,
          this.#deps.calendars,
        ));
        for (const [level, { at }] of escalation.levels.entries()) {
          if (until === null || at < until) this.#timer(at, `dialog ${seq} escalation ${level}`);
        }
      }
      const dialogId = dialogIdOf(this.instanceId, seq);
      this.record("DialogOpened", {
        seq,
        dialogId,
        name: options.name,
        assignees: [...options.assignees],
        form: jsonSchemaOf(options.schema),
        data: toJson(options.data ?? null),
        until,
        // A chain without a final answer records none (not null): its dialog times out.
        ...(escalation
          ? {
              escalation:
                escalation.finalAnswer === undefined
                  ? escalation
                  : { ...escalation, finalAnswer: toJson(escalation.finalAnswer) },
            }
          : {}),
      });
      if (until) this.#timer(until, `dialog ${seq}`);
      return this.#wait(`dialog "${options.name}" waits for an answer`, from, again);
    }
    if (call.state === "completed")
      return { answer: call.answer as never, by: call.by!, for: call.for ?? null };
    if (call.state === "pending" && call.escalation) {
      const final = await this.#escalate(call, options);
      if (final) return final as never;
    }
    this.#timeout(seq, call.state, call.until, `dialog "${call.name}"`);
    return this.#wait(`dialog "${call.name}" waits for an answer`, from, again);
  }

  /**
   * Records the levels of a pending dialog's escalation chain that have come (each reads its
   * assignees once; the event keeps them), and at the chain's end its final answer, if it has
   * one (otherwise the deadline times the dialog out as any other).
   */
  async #escalate(
    call: Extract<CallRecord, { kind: "dialog" }>,
    options: DialogOptions<StandardSchemaV1>,
  ): Promise<{ answer: unknown; by: ActorRef; for: null } | undefined> {
    const plan = call.escalation!;
    const now = this.#clock();
    let assignees = call.assignees;
    for (let level = plan.reached; level < plan.levels.length; level++) {
      const { at, mode } = plan.levels[level]!;
      // A level not yet come, or one set at or after the dialog's end, never comes.
      if (!passed(at, now) || (call.until !== null && at >= call.until)) break;
      const declared = options.escalation?.levels[level];
      if (!declared) break; // the code no longer declares this level: the chain stops here
      const found = await escalatedAssignees(declared.assignees, mode, assignees, () =>
        // A read only: no step, so no StepScheduled event for the cause to name.
        this.#deps.services({
          instanceId: this.instanceId,
          eventId: randomUUID(),
          actingFor: null,
        }),
      );
      assignees = found.assignees;
      this.record("DialogEscalated", {
        seq: call.seq,
        dialogId: call.dialogId,
        level,
        assignees: [...assignees],
        ...(found.error ? { error: found.error } : {}),
      });
    }
    if (plan.finalAnswer !== undefined && passed(call.until, now)) {
      this.record("DialogCompleted", {
        seq: call.seq,
        dialogId: call.dialogId,
        answer: plan.finalAnswer,
        by: ESCALATION_ACTOR,
      });
      return { answer: plan.finalAnswer, by: ESCALATION_ACTOR, for: null };
    }
    return undefined;
  }

  async request<D extends StandardSchemaV1>(
    binding: string,
    payload: unknown,
    options: RequestOptions<D> = {},
  ): Promise<SchemaOutput<D>> {
    // Sending is a step of its own (retried, recorded); the answer is the next call. The key
    // is the waiting call's, known before the send so that the receiver can echo it.
    const from = this.#seq;
    const again = () => this.request(binding, payload, options);
    const key = `${this.instanceId}:${this.#seq + 2}`;
    await this.#deps.send(this, binding, payload, key, options.retry);
    const seq = this.#next("request", binding);
    this.#probed(seq, options.schema);
    const call = this.#state.calls.get(seq);
    if (call?.kind !== "request") {
      const until = deadline(options.until, this.#clock(), this.#state.until, this.#deps.calendars);
      this.record("RequestSent", { seq, name: binding, key, until });
      if (until) this.#timer(until, `request ${seq}`);
      return this.#wait(`request through "${binding}" waits for its answer`, from, again);
    }
    if (call.state === "answered") {
      if (options.schema) {
        const checked = await validate(options.schema, call.answer);
        if (!checked.ok) {
          throw new ValidationError(`the answer to ${key} does not match its schema`, {
            issues: checked.issues,
          });
        }
        return checked.value as never;
      }
      return call.answer as never;
    }
    this.#timeout(seq, call.state, call.until, `request through "${binding}"`);
    return this.#wait(`request through "${binding}" waits for its answer`, from, again);
  }

  async start<R>(
    definition: string,
    version: number,
    parameters: unknown,
    options: { readonly until?: Until } = {},
  ): Promise<R> {
    const from = this.#seq;
    const again = () => this.start<R>(definition, version, parameters, options);
    const seq = this.#next("child", `${definition}@${version}`);
    const call = this.#state.calls.get(seq);
    if (call?.kind !== "child") {
      await this.#startChild(seq, definition, version, parameters, options.until);
      return this.#wait(`child ${definition}@${version} runs`, from, again);
    }
    if (call.state === "COMPLETED") return call.result as R;
    if (call.state === "CANCELLED") {
      throw new ChildFailedError(`child ${call.definition.name} ${call.childId} was cancelled`);
    }
    if (call.state === "timed_out") throw childTimeout(call);
    const child = await this.#deps.childOutcome(call.childId);
    if (child?.status === "COMPLETED" || child?.status === "CANCELLED") {
      const state = child.status;
      this.record("ChildCompleted", {
        seq,
        childId: call.childId,
        state,
        result: toJson(child.result ?? null),
        error: null,
      });
      if (state === "COMPLETED") return child.result as R;
      throw new ChildFailedError(`child ${call.definition.name} ${call.childId} was cancelled`);
    }
    if (passed(call.until, this.#clock())) {
      this.record("DeadlinePassed", { seq, until: call.until! });
      // The child goes too: its parent no longer waits for it.
      if (child) {
        this.effects.others.push({
          streamId: `workflow-${call.childId}`,
          events: [
            annalEvent("WorkflowCancelled", {
              by: null,
              reason: "its parent's deadline for it passed",
            }),
          ],
          expectedVersion: child.version,
        });
        this.effects.wakes.push(call.childId);
      }
      throw childTimeout(call);
    }
    return this.#wait(`child ${call.definition.name} ${call.childId} runs`, from, again);
  }

  now(): Date {
    return new Date(this.#value("now", () => this.#clock().toISOString()));
  }

  uuid(): string {
    return String(this.#value("uuid", () => randomUUID()));
  }

  random(): number {
    return Number(this.#value("random", () => Math.random()));
  }

  assert(condition: unknown, message: string): asserts condition {
    if (!condition) throw new AssertionError(message);
  }

  /**
   * The schema the code gave at call `seq` (a dialog's, a request's), when the run waits
   * parked at that very call; undefined otherwise (then only a probe can tell).
   */
  schemaAt(seq: number): { readonly schema: StandardSchemaV1 | undefined } | undefined {
    return this.#waiting && this.#seq === seq && this.#asked?.seq === seq ? this.#asked : undefined;
  }

  /** A probe at its call: hands over the call's schema and stops. */
  #probed(seq: number, schema: StandardSchemaV1 | undefined): void {
    this.#asked = { seq, schema };
    if (this.#probe?.seq !== seq) return;
    this.#probe.found(schema);
    this.#suspend("the probe reached its call");
  }

  /**
   * The instance waits here (for an answer, a retry, a child, its turn). A run that can park
   * keeps the code waiting at this call and, once resumed with a newer state, makes the call
   * again from where it began (`from`, the sequence number before it): its answer may be in
   * the state now. Any other run stops here (`#suspend`).
   */
  async #wait<T>(reason: string, from: number, again: () => Promise<T>): Promise<T> {
    const parked = this.#probe ? undefined : this.#deps.park?.();
    if (!parked) this.#suspend(reason);
    this.#waiting = true;
    await parked;
    this.#seq = from;
    return again();
  }

  /** Stops the run here: the instance waits (for an answer, a retry, a child). */
  #suspend(reason: string): never {
    this.#suspended ??= new Suspend(reason);
    throw this.#suspended;
  }

  /** Waits for something outside: a deadline timer owed to this instance. */
  #timer(dueAt: string, reason: string): void {
    this.effects.timers.push({ instanceId: this.instanceId, dueAt, reason });
  }

  /** A dialog's or request's deadline: TimeoutError once it has passed. */
  #timeout(seq: number, state: string, until: string | null, what: string): void {
    if (state === "timed_out") throw new TimeoutError(`${what} was not answered by ${until}`);
    if (state === "pending" && passed(until, this.#clock())) {
      this.record("DeadlinePassed", { seq, until: until! });
      throw new TimeoutError(`${what} was not answered by ${until}`);
    }
  }

  async #startChild(
    seq: number,
    name: string,
    version: number,
    parameters: unknown,
    until: Until | undefined,
  ): Promise<void> {
    const found = await this.#deps.childDefinition(name, version);
    if (!found) {
      throw new AnnalError("WF_NOT_FOUND", `no workflow ${name} version ${version} is deployed`);
    }
    const checked = await validate(found.parameters, parameters);
    if (!checked.ok) {
      throw new ValidationError(
        `the parameters of child ${name}@${version} do not match its schema`,
        {
          issues: checked.issues,
        },
      );
    }
    const now = this.#clock();
    const callUntil = deadline(until, now, this.#state.until, this.#deps.calendars);
    const childUntil = deadline(found.until, now, callUntil, this.#deps.calendars);
    const childId = randomUUID();
    this.record("ChildStarted", { seq, childId, definition: { name, version }, until: callUntil });
    this.effects.others.push({
      streamId: `workflow-${childId}`,
      events: [
        annalEvent("WorkflowStarted", {
          instanceId: childId,
          definition: { name, version, hash: found.hash },
          parameters: toJson(checked.value),
          startedBy: this.#state.startedBy,
          until: childUntil,
          parent: { instanceId: this.instanceId, seq },
          startKey: null,
        }),
      ],
      expectedVersion: "no_stream",
    });
    this.effects.wakes.push(childId);
    if (childUntil)
      this.effects.timers.push({ instanceId: childId, dueAt: childUntil, reason: "deadline" });
    if (callUntil) this.#timer(callUntil, `child ${seq}`);
  }

  #value(kind: "now" | "uuid" | "random", make: () => string | number): string | number {
    const seq = this.#next("value", kind);
    const call = this.#state.calls.get(seq);
    if (call?.kind === "value") return call.value;
    const value = make();
    this.record("FlowValueRecorded", { seq, kind, value });
    return value;
  }

  /** The next call's number, checked against what the log recorded there. */
  #next(kind: CallRecord["kind"], name: string): number {
    if (this.#suspended) throw this.#suspended;
    // Another call made while one waits parked (code that does not await it, or calls in
    // parallel): the run stops as a replay would, and the instance is replayed when it wakes.
    if (this.#waiting) this.#suspend("another call of the flow waits");
    const seq = ++this.#seq;
    const recorded = this.#state.calls.get(seq);
    if (recorded && describe(recorded) !== `${kind} ${JSON.stringify(name)}`) {
      throw new ReplayMismatchError(seq, describe(recorded), `${kind} ${JSON.stringify(name)}`);
    }
    return seq;
  }
}

/** A dialog's id: its instance and its call, so that an answer finds it without a lookup. */
export function dialogIdOf(instanceId: string, seq: number): string {
  return `${instanceId}.${seq}`;
}

/** A recorded call as a mismatch names it: `step "find owner"`, `dialog "approve"`. */
function describe(call: CallRecord): string {
  switch (call.kind) {
    case "step":
    case "dialog":
    case "request":
      return `${call.kind} ${JSON.stringify(call.name)}`;
    case "value":
      return `value ${JSON.stringify(call.valueKind)}`;
    case "child":
      return `child ${JSON.stringify(`${call.definition.name}@${call.definition.version}`)}`;
  }
}

function childTimeout(call: Extract<CallRecord, { kind: "child" }>): TimeoutError {
  return new TimeoutError(
    `child ${call.definition.name} ${call.childId} did not finish by ${call.until}`,
  );
}

/**
 * The error a step's code is given once it failed for good: the step's own error when it has
 * a class or code the code can catch by, else `WF_STEP_FAILED` naming the step.
 */
export function thrownFor(
  name: string,
  call: {
    readonly attempts: number;
    readonly error?: { code: string; message: string; name: string };
  },
) {
  const error = call.error ?? { code: "WF_UNCAUGHT_ERROR", message: "failed", name: "Error" };
  if (error.code !== "WF_UNCAUGHT_ERROR" && error.code !== "WF_STEP_TIMEOUT") return error;
  return {
    code: "WF_STEP_FAILED",
    name: "StepFailedError",
    message: `step "${name}" failed after ${call.attempts} attempt${call.attempts === 1 ? "" : "s"}: ${error.message}`,
  };
}

/** A value as the log keeps it (JSON): what a replay returns must be what the first run got. */
export function toJson(value: unknown): unknown {
  if (value === undefined) return null;
  return JSON.parse(JSON.stringify(value)) as unknown;
}
