import {
  INSTANCE_EVENT_TYPES,
  annalEvent,
  eventsOfTypes,
  workflowStream,
  type InstanceEventType,
} from "../events/index.ts";
import { AnnalError } from "../errors/index.ts";
import type { Queryable } from "../db/index.ts";
import type { Logger } from "../logger.ts";
import { readStream, WrongExpectedVersionError, type RecordedEvent } from "../store/index.ts";
import { provideBindings, type BindingSources, type StepCause } from "./bindings.ts";
import { commit, own, type CommitDeps } from "./commit.ts";
import type { RetryPolicy, WorkflowDefinition } from "./define.ts";
import type { Definitions } from "./definitions.ts";
import { recordError } from "./errors.ts";
import { ReplayFlow, Suspend, toJson } from "./flow.ts";
import { databaseClock, lockInstance } from "./lock.ts";
import {
  foldInstance,
  type InstanceEvent,
  type InstanceState,
} from "../../projections/workflows/index.ts";
import type { ReplayDeps } from "./flow.ts";
import { passed } from "./time.ts";
import type { Calendars } from "../time/index.ts";
import type { StandardSchemaV1 } from "../schema/index.ts";

const INSTANCE_TYPES: ReadonlySet<string> = new Set(INSTANCE_EVENT_TYPES);

/** What advancing instances needs: the log, jobs, the definitions, the bindings' sources. */
export interface EngineDeps extends CommitDeps {
  readonly definitions: Definitions;
  readonly bindings: BindingSources;
  readonly log: Pick<Logger, "info" | "warn" | "error">;
  /** Steps one advance runs before the instance yields to others and is woken again. */
  readonly stepsPerAdvance?: number;
  /** The `[[calendars]]` business-time deadlines (`"3bd"`) count in. */
  readonly calendars?: Calendars;
}

export type AdvanceResult = "advanced" | "locked" | "missing" | "conflict";

/**
 * Advances one instance as far as it goes: takes its lock (one engine at a time; `locked` if
 * another holds it), folds its events, and re-runs its code from its stored bundle with the
 * recorded outcomes, until the code waits (a dialog, a retry, a child), ends, or fails.
 * What it decides is appended with the version the stream was read at (`conflict` if anything
 * else appended meanwhile; the caller wakes it again).
 */
export async function advanceInstance(
  deps: EngineDeps,
  instanceId: string,
): Promise<AdvanceResult> {
  const lock = await lockInstance(deps.pool, instanceId);
  if (!lock) return "locked";
  try {
    const state = await loadInstance(deps.pool, instanceId);
    if (!state) return "missing";
    const now = await databaseClock(deps.pool);
    const clock = clockFrom(now);
    if (state.status === "CANCELLED") {
      await settleCancelled(deps, state);
      return "advanced";
    }
    if (state.status === "COMPLETED" || state.status === "ERRORED") return "advanced";
    if (passed(state.until, now) && !state.deadlinePassed) {
      await commit(deps, {
        appends: [
          own(
            instanceId,
            [
              annalEvent("DeadlinePassed", { seq: null, until: state.until! }),
              annalEvent("WorkflowErrored", {
                error: {
                  code: "WF_TIMEOUT",
                  name: "TimeoutError",
                  message: `the instance did not finish by its deadline ${state.until}`,
                },
                seq: null,
              }),
            ],
            state.version,
          ),
        ],
      });
      return "advanced";
    }
    const definition = await deps.definitions.byHash(state.definition.hash);
    await new InstanceRun(deps, state, definition, clock).execute();
    return "advanced";
  } catch (error) {
    if (error instanceof WrongExpectedVersionError) return "conflict";
    throw error;
  } finally {
    await lock.release();
  }
}

/** An instance's events, folded; undefined when it has none. */
export async function loadInstance(
  db: Queryable,
  instanceId: string,
): Promise<InstanceState | undefined> {
  return foldInstance(await instanceEvents(db, instanceId));
}

/** An instance's events, in stream order. */
export async function instanceEvents(db: Queryable, instanceId: string): Promise<InstanceEvent[]> {
  const events = await readStream(db, workflowStream(instanceId));
  return eventsOfTypes<InstanceEventType>(events, INSTANCE_TYPES);
}

/** The database's clock going on from `start` as this process's clock does. */
function clockFrom(start: Date): () => Date {
  const local = performance.now();
  return () => new Date(start.getTime() + Math.round(performance.now() - local));
}

/** One run of an instance's code, and what it needs from the engine while it runs. */
class InstanceRun implements ReplayDeps {
  readonly workflow: string;
  readonly #deps: EngineDeps;
  readonly #state: InstanceState;
  readonly #definition: WorkflowDefinition;
  readonly #clock: () => Date;
  #version: number;
  #steps = 0;

  constructor(
    deps: EngineDeps,
    state: InstanceState,
    definition: WorkflowDefinition,
    clock: () => Date,
  ) {
    this.#deps = deps;
    this.#state = state;
    this.#definition = definition;
    this.#clock = clock;
    this.#version = state.version;
    this.workflow = state.definition.name;
  }

  async execute(): Promise<void> {
    const flow = new ReplayFlow(this.#state, this, this.#clock);
    try {
      const result = await this.#definition.run(flow as never, this.#state.parameters as never);
      if (!flow.suspended) {
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
    }
    await this.flush(flow);
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

/**
 * After a cancellation: the instance's live children are cancelled too, and its parent is
 * woken to take the news. Idempotent: a child already ended is left alone.
 */
async function settleCancelled(deps: EngineDeps, state: InstanceState): Promise<void> {
  const appends = [];
  const wakes: string[] = state.parent ? [state.parent.instanceId] : [];
  for (const call of state.calls.values()) {
    if (call.kind !== "child" || call.state !== "running") continue;
    const child = await loadInstance(deps.pool, call.childId);
    if (!child || child.status === "COMPLETED" || child.status === "CANCELLED") continue;
    appends.push({
      streamId: workflowStream(call.childId),
      events: [annalEvent("WorkflowCancelled", { by: null, reason: "its parent was cancelled" })],
      expectedVersion: child.version,
    });
    wakes.push(call.childId);
  }
  if (appends.length + wakes.length > 0) await commit(deps, { appends, wakes });
}

/**
 * The schema the instance's code gives at call `seq` (a dialog's answer schema, a request's),
 * found by replaying its recorded history up to there without running anything; `reached`
 * false when the code does not get there (it changed, or the call is not what waits).
 */
export async function probeCallSchema(
  deps: EngineDeps,
  state: InstanceState,
  seq: number,
): Promise<{ reached: boolean; schema: StandardSchemaV1 | undefined }> {
  const definition = await deps.definitions.byHash(state.definition.hash);
  const clock = clockFrom(await databaseClock(deps.pool));
  const probe = {
    seq,
    reached: false,
    schema: undefined as StandardSchemaV1 | undefined,
    found(schema: StandardSchemaV1 | undefined) {
      probe.reached = true;
      probe.schema = schema;
    },
  };
  const flow = new ReplayFlow(state, new InstanceRun(deps, state, definition, clock), clock, probe);
  try {
    await definition.run(flow as never, state.parameters as never);
  } catch {
    // A probe stops by throwing; anything else just means it did not get there.
  }
  return { reached: probe.reached, schema: probe.schema };
}
