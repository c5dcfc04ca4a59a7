import { AnnalError } from "../errors/index.ts";
import type { RecordedEvent } from "../store/index.ts";
import type { Calendars } from "../time/index.ts";
import type { InstanceState } from "../../projections/workflows/index.ts";
import type { EngineDeps } from "./advance.ts";
import { provideBindings, type StepCause } from "./bindings.ts";
import { commit, own } from "./commit.ts";
import type { RetryPolicy, WorkflowDefinition } from "./define.ts";
import { recordError } from "./errors.ts";
import { toJson } from "./call-records.ts";
import { ReplayFlow } from "./flow.ts";
import { Suspend, type ReplayDeps } from "./replay-run.ts";
import { WrongExpectedVersionError } from "../store/index.ts";
import { loadInstance } from "./instance.ts";
import type { StandardSchemaV1 } from "../schema/index.ts";

/** How one turn of a run ended: its code ended (or stopped for good), or it waits, parked. */
export type TurnOutcome = "ended" | "parked";

/**
 * One run of an instance's code, and what it needs from the engine while it runs.
 *
 * A sticky run (`sticky`) does not unwind its code when the code must wait: it parks there (the
 * code's `await` on the flow call stays pending), appends what the turn decided, and can be
 * resumed by a later wake with the instance's newer state, so that the code goes on from
 * where it stands: no call is replayed. A run that is not sticky, or one that cannot park
 * (a probe, a call made while another waits), unwinds with `Suspend` as a replay expects.
 */
export class InstanceRun implements ReplayDeps {
  readonly workflow: string;
  readonly #deps: EngineDeps;
  readonly #definition: WorkflowDefinition;
  readonly #sticky: boolean;
  #state: InstanceState;
  #clock: () => Date;
  #version: number;
  #steps = 0;
  #flow: ReplayFlow | undefined;
  #running: Promise<void> | undefined;
  #ended = false;
  /** Tells the current turn that the code parked. */
  #parked: (() => void) | undefined;
  /** Lets the parked code go on. */
  #resume: (() => void) | undefined;

  constructor(
    deps: EngineDeps,
    state: InstanceState,
    definition: WorkflowDefinition,
    clock: () => Date,
    options: { readonly sticky?: boolean } = {},
  ) {
    this.#deps = deps;
    this.#state = state;
    this.#definition = definition;
    this.#clock = clock;
    this.#sticky = options.sticky ?? false;
    this.#version = state.version;
    this.workflow = state.definition.name;
  }

  /** The state this run last started or resumed from (its own later events are not in it). */
  get state(): InstanceState {
    return this.#state;
  }

  /** The stream's version after this run's last append. */
  get version(): number {
    return this.#version;
  }

  get resumable(): boolean {
    return (
      this.#resume !== undefined &&
      !this.#ended &&
      this.#flow !== undefined &&
      !this.#flow.suspended
    );
  }

  /**
   * The schema the parked code gave at call `seq`, the dialog or request it waits at: what a
   * command checks an answer with, without replaying the code (`probeCallSchema`). Undefined
   * when the run does not wait parked at that call.
   */
  schemaAt(seq: number): { readonly schema: StandardSchemaV1 | undefined } | undefined {
    return this.resumable ? this.#flow!.schemaAt(seq) : undefined;
  }

  /** Runs the code from its start (replaying what the log records) until it ends or waits. */
  async execute(): Promise<TurnOutcome> {
    const flow = new ReplayFlow(this.#state, this, this.#clock);
    this.#flow = flow;
    // Ready for a park before the code starts: it may wait before its first await returns.
    const parked = this.#parking();
    this.#running = this.#runCode(flow);
    return this.#settle(flow, parked);
  }

  /**
   * Goes on from where the parked code waits, with the instance's state now (`state` must
   * hold every event up to the stream's version: this run's own and answers since): the call
   * it waits at is made again against it.
   */
  async resume(state: InstanceState, clock: () => Date): Promise<TurnOutcome> {
    const flow = this.#flow;
    const resume = this.#resume;
    if (!flow || !resume || !this.resumable) {
      throw new AnnalError("ANNAL_INTERNAL", "a workflow run was resumed that is not parked");
    }
    this.#state = state;
    this.#clock = clock;
    this.#version = state.version;
    this.#steps = 0;
    this.#resume = undefined;
    flow.resume(state, clock);
    const parked = this.#parking();
    resume();
    return this.#settle(flow, parked);
  }

  #parking(): Promise<TurnOutcome> {
    return new Promise<TurnOutcome>((resolve) => {
      this.#parked = () => resolve("parked");
    });
  }

  /** Waits for the code to end or park, then appends what the turn decided. */
  async #settle(flow: ReplayFlow, parked: Promise<TurnOutcome>): Promise<TurnOutcome> {
    const ended = this.#running!.then(() => "ended" as const);
    const outcome = await Promise.race([parked, ended]);
    this.#parked = undefined;
    await this.flush(flow);
    return outcome;
  }

  async #runCode(flow: ReplayFlow): Promise<void> {
    try {
      const result = await this.#definition.run(flow as never, this.#state.parameters as never);
      if (!flow.suspended && !flow.waiting) {
        if (flow.unmadeCalls() > 0) {
          throw new AnnalError(
            "WF_REPLAY_MISMATCH",
            `the recorded history has ${flow.unmadeCalls()} call(s) after call ${flow.seq}, and the code now ends there`,
          );
        }
        flow.record("WorkflowCompleted", { result: toJson(result) });
        if (this.#state.parent) flow.effects.wakes.push(this.#state.parent.instanceId);
      }
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) throw error;
      if (!(error instanceof Suspend) && !flow.suspended) {
        const recorded = recordError(error);
        this.#deps.log.warn(
          {
            instanceId: this.#state.id,
            workflow: this.workflow,
            code: recorded.code,
            seq: flow.seq,
          },
          `workflow instance errored: ${recorded.message}`,
        );
        flow.record("WorkflowErrored", { error: recorded, seq: flow.seq === 0 ? null : flow.seq });
      }
    } finally {
      this.#ended = true;
    }
  }

  /** Parks the code at a wait (sticky runs only): resolves when a later wake resumes it. */
  park(): Promise<void> | undefined {
    const parked = this.#parked;
    if (!this.#sticky || !parked) return undefined;
    return new Promise<void>((resolve) => {
      this.#resume = resolve;
      parked();
    });
  }

  async flush(flow: ReplayFlow): Promise<readonly RecordedEvent[]> {
    const events = flow.pending.splice(0);
    const others = flow.effects.others.splice(0);
    const timers = flow.effects.timers.splice(0);
    const wakes = flow.effects.wakes.splice(0);
    if (events.length + others.length + timers.length + wakes.length === 0) return [];
    const [recorded = []] = await commit(this.#deps, {
      appends: [own(this.#state.id, events, this.#version), ...others],
      timers,
      wakes,
    });
    this.#version += events.length;
    return recorded;
  }

  services(cause: StepCause): Promise<Record<string, unknown>> {
    this.#steps++;
    return provideBindings(this.#deps.bindings, this.#definition.bindings, cause);
  }

  clock(): Date {
    return this.#clock();
  }

  get calendars(): Calendars | undefined {
    return this.#deps.calendars;
  }

  mustYield(): boolean {
    return this.#steps >= (this.#deps.stepsPerAdvance ?? 100);
  }

  async send(
    flow: ReplayFlow,
    binding: string,
    payload: unknown,
    key: string,
    retry: RetryPolicy | undefined,
  ): Promise<void> {
    await flow.step(
      `send ${binding}`,
      async ({ bindings }: { bindings: Record<string, unknown> }) => {
        const service = bindings[binding] as { send?: (...args: unknown[]) => unknown } | undefined;
        if (typeof service?.send !== "function") {
          throw new AnnalError(
            "WF_BINDING_MISSING",
            `flow.request("${binding}") needs a binding "${binding}" with a send(payload, { key }) method`,
          );
        }
        return service.send(payload, { key, instanceId: flow.instanceId });
      },
      retry ? { retry } : {},
    );
  }

  async childDefinition(name: string, version: number) {
    const found = await this.#deps.definitions.version(name, version);
    if (!found) return undefined;
    return {
      hash: found.hash,
      parameters: found.definition.parameters,
      ...(found.definition.until === undefined ? {} : { until: found.definition.until }),
    };
  }

  async childOutcome(childId: string) {
    const child = await loadInstance(this.#deps.pool, childId);
    return child && { status: child.status, version: child.version, result: child.result };
  }
}
