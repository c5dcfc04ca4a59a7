import type { NewEvent, RecordedEvent } from "../store/index.ts";
import type { Calendars } from "../time/index.ts";
import { foldInstance, type InstanceEvent } from "../../projections/workflows/index.ts";
import type { Timer } from "./commit.ts";
import type { WorkflowDefinition } from "./define.ts";
import { ReplayFlow } from "./flow.ts";
import { Suspend, type ReplayDeps } from "./replay-run.ts";

/** What the code of a new instance records up to its first wait. */
export interface FirstWait {
  /** The events after its `WorkflowStarted`: its `DialogOpened`, any `FlowValueRecorded`. */
  readonly events: readonly NewEvent[];
  /** The timers they owe the instance (the dialog's deadline, its escalation's levels). */
  readonly timers: readonly Timer[];
}

/** The code asked for what a start does not do (a step, a child): the engine runs it. */
class NotAtStart extends Error {}

/**
 * Runs a new instance's code, as the engine's first advance would, until it first waits for
 * a dialog's answer, and
 * returns what that advance would record, so that a bulk start (`startWorkflows` with
 * `untilFirstWait`) records it with the `WorkflowStarted` in the same transaction and queues no
 * wake-up: the instance waits at its dialog as if the engine had opened it. Nothing outside
 * the log happens before that wait, so nothing is lost by doing it here, and the engine's
 * replay finds the same calls in the log when it next wakes (an answer, a timer).
 *
 * Undefined where the engine must run the instance itself: its code runs a step, sends a
 * request, starts a child or yields before it waits, ends, or fails (the engine records the
 * failure as it always does).
 */
export async function runToFirstWait(
  definition: WorkflowDefinition,
  started: NewEvent,
  instanceId: string,
  now: Date,
  calendars: Calendars | undefined,
): Promise<FirstWait | undefined> {
  const recorded: RecordedEvent = {
    id: "",
    streamId: `workflow-${instanceId}`,
    streamVersion: 1,
    type: started.type,
    data: started.data,
    metadata: started.metadata ?? {},
    occurredAt: now,
    recordedAt: now,
    idempotencyKey: null,
    transactionId: "0",
    position: 0,
  };
  const state = foldInstance([recorded as InstanceEvent])!;
  let refused = false;
  const refuse = (): never => {
    refused = true;
    throw new NotAtStart("not run at the start");
  };
  const local = performance.now();
  const clock = () => new Date(now.getTime() + Math.round(performance.now() - local));
  const deps: ReplayDeps = {
    workflow: state.definition.name,
    calendars,
    clock,
    // A step yields at once (`mustYield`): it is recorded by the engine, never here.
    mustYield: () => true,
    flush: refuse,
    services: refuse,
    send: refuse,
    childDefinition: refuse,
    childOutcome: refuse,
  };
  const flow = new ReplayFlow(state, deps, clock);
  try {
    await definition.run(flow as never, state.parameters as never);
    return undefined; // it ended without waiting: the engine records its end
  } catch (error) {
    if (!(error instanceof Suspend)) return undefined;
  }
  const waits =
    !refused &&
    flow.effects.wakes.length === 0 &&
    flow.effects.others.length === 0 &&
    flow.pending.some((event) => event.type === "DialogOpened");
  return waits ? { events: [...flow.pending], timers: [...flow.effects.timers] } : undefined;
}
