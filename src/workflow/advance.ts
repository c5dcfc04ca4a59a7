import { annalEvent, workflowStream } from "../events/index.ts";
import type { Logger } from "../logger.ts";
import { WrongExpectedVersionError } from "../store/index.ts";
import type { BindingSources } from "./bindings.ts";
import { commit, own, type CommitDeps } from "./commit.ts";
import type { Definitions } from "./definitions.ts";
import { ReplayFlow } from "./flow.ts";
import { instanceEvents, loadInstance } from "./instance.ts";
import { databaseClock, lockInstance } from "./lock.ts";
import { foldInstance, type InstanceState } from "../../projections/workflows/index.ts";
import { InstanceRun } from "./run.ts";
import type { StickyRuns } from "./sticky.ts";
import { passed } from "./time.ts";
import type { Calendars } from "../time/index.ts";
import type { StandardSchemaV1 } from "../schema/index.ts";

export { instanceEvents, loadInstance } from "./instance.ts";

/** What advancing instances needs: the log, jobs, the definitions, the bindings' sources. */
export interface EngineDeps extends CommitDeps {
  readonly definitions: Definitions;
  readonly bindings: BindingSources;
  readonly log: Pick<Logger, "info" | "warn" | "error">;
  /** Steps one advance runs before the instance yields to others and is woken again. */
  readonly stepsPerAdvance?: number;
  /** The `[[calendars]]` business-time deadlines (`"3bd"`) count in. */
  readonly calendars?: Calendars;
  /**
   * This worker's parked runs (`StickyRuns`): a wake of an instance whose run is kept here goes
   * on from where its code waits instead of replaying it. None: every wake replays.
   */
  readonly sticky?: StickyRuns<InstanceRun>;
}

export type AdvanceResult = "advanced" | "locked" | "missing" | "conflict";

/**
 * Advances one instance as far as it goes: takes its lock (one engine at a time; `locked` if
 * another holds it), folds its events, and runs its code from its stored bundle until the code
 * waits (a dialog, a retry, a child, its turn), ends, or fails: a run this worker keeps parked
 * (`deps.sticky`) goes on from where it waits, any other re-runs the code from its start with
 * the recorded outcomes. What it decides is appended with the version the stream was read at
 * (`conflict` if anything else appended meanwhile; the caller wakes it again).
 */
export async function advanceInstance(
  deps: EngineDeps,
  instanceId: string,
  options: {
    /** How long to wait for the instance's lock before `locked` (default 0: not at all). */
    readonly lockWaitMs?: number;
  } = {},
): Promise<AdvanceResult> {
  const lock = await lockInstance(deps.pool, instanceId, { waitMs: options.lockWaitMs ?? 0 });
  if (!lock) return "locked";
  try {
    const { state, kept } = await currentState(deps, instanceId);
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
    let run = kept;
    let outcome;
    if (run) {
      outcome = await run.resume(state, clock);
    } else {
      const definition = await deps.definitions.byHash(state.definition.hash);
      run = new InstanceRun(deps, state, definition, clock, { sticky: deps.sticky !== undefined });
      outcome = await run.execute();
    }
    if (outcome === "parked") deps.sticky?.keep(instanceId, run);
    return "advanced";
  } catch (error) {
    if (error instanceof WrongExpectedVersionError) return "conflict";
    throw error;
  } finally {
    await lock.release();
  }
}

/**
 * What a command may append while a run waits: the answer it waits for. Any other event past
 * the run's own last one means another worker ran the instance's code meanwhile.
 */
const ANSWERS: ReadonlySet<string> = new Set(["DialogCompleted", "RequestAnswered"]);

/**
 * The instance's state now, and the run this worker keeps parked for it when that run may go
 * on. A kept run's state is brought up to date from the events after it (its own appends and
 * any answer since: a few events, not the whole stream). The run is stale, and let go for a
 * replay, when an event past its own last append is not an answer (another worker advanced
 * the instance: the stream's version moved past the run's) or the stream holds fewer events
 * than the run appended.
 */
async function currentState(
  deps: EngineDeps,
  instanceId: string,
): Promise<{ state: InstanceState | undefined; kept?: InstanceRun }> {
  const kept = deps.sticky?.take(instanceId);
  if (!kept) {
    if (deps.sticky) deps.sticky.stats.misses++;
    return { state: await loadInstance(deps.pool, instanceId) };
  }
  const { state, current } = await foldParked(deps, instanceId, kept);
  if (current) {
    deps.sticky!.stats.hits++;
    return { state, kept };
  }
  deps.sticky!.stats.stale++;
  return { state };
}

/**
 * The instance's state now, folded from a run's state and the events after it (a few: the
 * run's own appends and an answer since, not the whole stream), and whether the run may go on
 * from where it waits (`current`; see `currentState`). The state is right either way.
 */
export async function foldParked(
  deps: EngineDeps,
  instanceId: string,
  run: InstanceRun,
): Promise<{ state: InstanceState | undefined; current: boolean }> {
  const since = await instanceEvents(deps.pool, instanceId, {
    fromVersion: run.state.version + 1,
  });
  const state = foldInstance(since, run.state);
  const foreign = since.filter((event) => event.streamVersion > run.version);
  const own = since.length - foreign.length;
  const current =
    run.resumable &&
    own === run.version - run.state.version &&
    foreign.every((event) => ANSWERS.has(event.type));
  return { state, current };
}

/** The database's clock going on from `start` as this process's clock does. */
function clockFrom(start: Date): () => Date {
  const local = performance.now();
  return () => new Date(start.getTime() + Math.round(performance.now() - local));
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
