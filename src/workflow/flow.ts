import { randomUUID } from "node:crypto";
import {
  annalEvent,
  type ActorRef,
  type AnnalEventMap,
  type AnnalEventType,
} from "../events/index.ts";
import { validate, type SchemaOutput, type StandardSchemaV1 } from "../schema/index.ts";
import type { NewEvent } from "../store/index.ts";
import type { DialogOptions, Flow, RequestOptions, StepOptions, Until } from "./define.ts";
import {
  AssertionError,
  ReplayMismatchError,
  TimeoutError,
  ValidationError,
  errorFromRecord,
} from "./errors.ts";
import { runStep } from "./step.ts";
import type { CallRecord, InstanceState } from "../../projections/workflows/index.ts";
import { deadline, passed } from "./time.ts";
import { describeCall, thrownFor } from "./call-records.ts";
import { childCallOutcome, startChild } from "./flow-child.ts";
import { escalateDialog, openDialog } from "./flow-dialog.ts";
import {
  Suspend,
  type Effects,
  type Probe,
  type ReplayDeps,
  type RunContext,
} from "./replay-run.ts";

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
  /** This run as the call kinds of `flow-dialog.ts` and `flow-child.ts` see it. */
  readonly #run: RunContext;

  constructor(state: InstanceState, deps: ReplayDeps, clock: () => Date, probe?: Probe) {
    this.instanceId = state.id;
    this.startedBy = state.startedBy;
    this.#state = state;
    this.#deps = deps;
    this.#clock = clock;
    this.#probe = probe;
    this.#run = {
      instanceId: this.instanceId,
      state: () => this.#state,
      deps,
      effects: this.effects,
      now: () => this.#clock(),
      record: (type, data) => this.record(type, data),
      timer: (dueAt, reason) => this.#timer(dueAt, reason),
    };
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
      openDialog(this.#run, seq, options);
      return this.#wait(`dialog "${options.name}" waits for an answer`, from, again);
    }
    if (call.state === "completed")
      return { answer: call.answer as never, by: call.by!, for: call.for ?? null };
    if (call.state === "pending" && call.escalation) {
      const final = await escalateDialog(this.#run, call, options);
      if (final) return final as never;
    }
    this.#timeout(seq, call.state, call.until, `dialog "${call.name}"`);
    return this.#wait(`dialog "${call.name}" waits for an answer`, from, again);
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
      await startChild(this.#run, seq, definition, version, parameters, options.until);
      return this.#wait(`child ${definition}@${version} runs`, from, again);
    }
    const done = await childCallOutcome<R>(this.#run, seq, call);
    if (done) return done.result;
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
    if (recorded && describeCall(recorded) !== `${kind} ${JSON.stringify(name)}`) {
      throw new ReplayMismatchError(seq, describeCall(recorded), `${kind} ${JSON.stringify(name)}`);
    }
    return seq;
  }
}
