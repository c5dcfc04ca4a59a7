import type { ActorRef, AnnalEventMap, RecordedError } from "../events/index.ts";
import { isAnnalError } from "../errors/index.ts";
import { validate } from "../schema/index.ts";
import type { RecordedEvent } from "../store/index.ts";
import type { StepCause } from "./bindings.ts";
import type { RetryPolicy, StepOptions } from "./define.ts";
import { recordError } from "./errors.ts";
import { thrownFor, toJson } from "./call-records.ts";
import type { ReplayFlow } from "./flow.ts";
import { durationMs } from "./time.ts";

/** What running a step needs from the engine. */
export interface StepRunner {
  /** The instance's definition's name (recorded with each step, for a change's cause). */
  readonly workflow: string;
  /** Appends the flow's pending events and effects; the instance's recorded events. */
  flush(flow: ReplayFlow): Promise<readonly RecordedEvent[]>;
  /** The bindings' services for one step, its writes caused by `cause`. */
  services(cause: StepCause): Promise<Record<string, unknown>>;
  /** The database's clock, now. */
  clock(): Date;
  /** Sends a request's payload through a binding, as a step of the flow. */
  send(
    flow: ReplayFlow,
    binding: string,
    payload: unknown,
    key: string,
    retry: RetryPolicy | undefined,
  ): Promise<void>;
  /** True once this advance has run its share of steps: the instance yields and is woken again. */
  mustYield(): boolean;
}

export type StepOutcome =
  | { readonly kind: "completed"; readonly result: unknown }
  | { readonly kind: "retry"; readonly retryAt: string }
  | { readonly kind: "failed"; readonly thrown: RecordedError };

/** A step's completion as the next `StepScheduled` carries it. */
type StepCompletion = NonNullable<AnnalEventMap["StepScheduled"]["completed"]>;

const DEFAULT_TIMEOUT = "5m";
const DEFAULT_RETRY: Required<RetryPolicy> = { maxAttempts: 5, initialDelay: "1s", maxDelay: "5m" };

/** Failures no further attempt can mend: recorded as they are and given to the code at once. */
const PERMANENT = new Set([
  "WF_NON_RETRYABLE",
  "WF_VALIDATION",
  "WF_ASSERTION",
  "WF_TIMEOUT",
  "WF_REPLAY_MISMATCH",
  "WF_BINDING_MISSING",
]);

/**
 * Runs one attempt of a step: records `StepScheduled` first (so the attempt, and any
 * directory write it makes, has a cause in the log before it has effects), runs the code
 * with the step's bindings and within its timeout, and records the outcome: the result
 * (checked by `schema`), a retry at a moment of the database's clock (exponential backoff with
 * jitter), or a failure for good. At least once: an attempt whose process dies before its
 * outcome is recorded runs again.
 */
export async function runStep(
  runner: StepRunner,
  flow: ReplayFlow,
  step: {
    readonly seq: number;
    readonly name: string;
    readonly fn: (context: unknown) => unknown;
    readonly options: StepOptions<unknown>;
    readonly attempt: number;
  },
): Promise<StepOutcome> {
  const { seq, name, options, attempt } = step;
  const actingFor: ActorRef | null = options.as ?? null;
  const completed = completedJustBefore(flow);
  flow.record("StepScheduled", {
    instanceId: flow.instanceId,
    workflow: runner.workflow,
    seq,
    name,
    attempt,
    ...(actingFor ? { actingFor } : {}),
    ...(completed ? { completed } : {}),
  });
  const scheduled = (await runner.flush(flow)).at(-1)!;
  let bindings: Record<string, unknown>;
  try {
    bindings = await runner.services({
      instanceId: flow.instanceId,
      eventId: scheduled.id,
      actingFor,
    });
  } catch (caught) {
    // A binding that cannot be provided is not mended by another attempt.
    return fail(flow, step, recordError(caught));
  }
  let error: unknown;
  try {
    const value = await withTimeout(
      (signal) => step.fn({ bindings, attempt, instanceId: flow.instanceId, signal }),
      durationMs(options.timeout ?? DEFAULT_TIMEOUT, `step "${name}" timeout`),
    );
    const result = toJson(value);
    if (options.schema) {
      const checked = await validate(options.schema, result);
      if (!checked.ok) {
        return fail(flow, step, {
          code: "WF_VALIDATION",
          name: "ValidationError",
          message: `the result of step "${name}" does not match its schema: ${checked.issues.join("; ")}`,
        });
      }
    }
    flow.record("StepCompleted", { seq, name, attempt, result });
    return { kind: "completed", result };
  } catch (caught) {
    error = caught;
  }
  const recorded = recordError(error);
  const kind = isAnnalError(error) ? error.kind : recorded.code;
  const policy = { ...DEFAULT_RETRY, ...options.retry };
  if (PERMANENT.has(kind) || attempt >= policy.maxAttempts) return fail(flow, step, recorded);
  const retryAt = new Date(runner.clock().getTime() + backoff(policy, attempt)).toISOString();
  flow.record("StepFailed", { seq, name, attempt, error: recorded, retryAt });
  flow.effects.timers.push({ instanceId: flow.instanceId, dueAt: retryAt, reason: `retry ${seq}` });
  return { kind: "retry", retryAt };
}

/**
 * The completion of the step just before, taken from the flow's pending events when it is the
 * last of them (nothing recorded since): it rides along with the next step's `StepScheduled`,
 * one event a step instead of two. Any other pending completion stays a `StepCompleted`.
 */
function completedJustBefore(flow: ReplayFlow): StepCompletion | undefined {
  const last = flow.pending.at(-1);
  if (last?.type !== "StepCompleted") return undefined;
  flow.pending.pop();
  const { seq, result } = last.data as AnnalEventMap["StepCompleted"];
  // No nulls: a step that returned nothing (null, as `toJson` keeps it) says only which it was.
  return result === null ? { seq } : { seq, result };
}

function fail(
  flow: ReplayFlow,
  step: { readonly seq: number; readonly name: string; readonly attempt: number },
  error: RecordedError,
): StepOutcome {
  flow.record("StepFailed", { ...step, error, retryAt: null });
  return { kind: "failed", thrown: thrownFor(step.name, { attempts: step.attempt, error }) };
}

/**
 * The wait before the attempt after `attempt`: `initialDelay · 2^(attempt-1)`, at most
 * `maxDelay`, with ±25% jitter so that steps failing together do not retry together.
 */
export function backoff(policy: Required<RetryPolicy>, attempt: number): number {
  const initial = durationMs(policy.initialDelay, "retry.initialDelay");
  const max = durationMs(policy.maxDelay, "retry.maxDelay");
  const exponential = Math.min(max, initial * 2 ** (attempt - 1));
  return Math.min(max, Math.round(exponential * (0.75 + Math.random() * 0.5)));
}

/** Runs `work` with an AbortSignal that aborts after `ms`; rejects then with WF_STEP_TIMEOUT. */
async function withTimeout<T>(
  work: (signal: AbortSignal) => T | Promise<T>,
  ms: number,
): Promise<T> {
  const controller = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = Object.assign(new Error(`the attempt took longer than ${ms} ms`), {
        code: "WF_STEP_TIMEOUT",
      });
      controller.abort(error);
      reject(error);
    }, ms);
  });
  try {
    return await Promise.race([Promise.resolve().then(() => work(controller.signal)), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
