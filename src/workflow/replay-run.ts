import type { AnnalEventMap, AnnalEventType } from "../events/index.ts";
import type { StandardSchemaV1 } from "../schema/index.ts";
import type { NewEvent } from "../store/index.ts";
import type { Calendars } from "../time/index.ts";
import type { InstanceState } from "../../projections/workflows/index.ts";
import type { Until } from "./define.ts";
import type { StepRunner } from "./step.ts";

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

/**
 * A run that only looks: it replays up to call `seq` and hands over the schema the code gives
 * there (a dialog's answer schema, a request's), so a command can check an answer with the
 * definition's own schema before it records it. It never runs a step.
 */
export interface Probe {
  readonly seq: number;
  found(schema: StandardSchemaV1 | undefined): void;
}

/** What the replay needs from the engine. */
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
 * What a call of the flow needs of the run it is made in (`ReplayFlow` gives it to the call
 * kinds in `flow-dialog.ts` and `flow-child.ts`): the instance's state as the log has it, the
 * engine, the run's clock, and where the call records its events, timers and other effects.
 */
export interface RunContext {
  readonly instanceId: string;
  /** The instance's state: the newer one once a parked run is resumed. */
  state(): InstanceState;
  readonly deps: ReplayDeps;
  readonly effects: Effects;
  now(): Date;
  record<T extends AnnalEventType>(type: T, data: AnnalEventMap[T]): void;
  /** A deadline timer owed to this instance. */
  timer(dueAt: string, reason: string): void;
}
