import type { RecordedError } from "../events/index.ts";
import { AnnalError, isErrorCode, type ErrorCode } from "../errors/index.ts";

/** Options of the SDK's error classes: a code of your own (caught by it), a cause. */
export interface WorkflowErrorOptions {
  /** A code of your own (e.g. `HR_UNKNOWN_EMPLOYEE`): it is recorded, and replays as it was. */
  readonly code?: string;
  readonly cause?: unknown;
}

function options(kind: ErrorCode, given: WorkflowErrorOptions) {
  return {
    cause: given.cause,
    ...(given.code === undefined || given.code === kind ? {} : { userCode: given.code }),
  };
}

/**
 * A step's permanent failure: annal records it and does not retry. Thrown by workflow code
 * or a binding; `WF_NON_RETRYABLE` unless given a code of its own.
 *
 * @example
 * if (!person) throw new NonRetryableError(`no employee ${id}`, { code: "HR_UNKNOWN_EMPLOYEE" });
 */
export class NonRetryableError extends AnnalError {
  constructor(message: string, given: WorkflowErrorOptions = {}) {
    super("WF_NON_RETRYABLE", message, options("WF_NON_RETRYABLE", given));
  }
}

/** A value failed its schema (parameters, a step's result, an answer): `WF_VALIDATION`. */
export class ValidationError extends AnnalError {
  constructor(message: string, given: WorkflowErrorOptions & { issues?: readonly string[] } = {}) {
    super("WF_VALIDATION", message, {
      ...options("WF_VALIDATION", given),
      ...(given.issues ? { details: { issues: given.issues } } : {}),
    });
  }
}

/**
 * A deadline passed: a dialog, request or child that did not answer by its `until`, or a step
 * over its `timeout`. Workflow code catches it to escalate: `WF_TIMEOUT`.
 *
 * @example
 * try { await flow.dialog({ name: "approve", assignees: [owner], until: "3d", schema }) }
 * catch (error) { if (error instanceof TimeoutError) return escalate(); throw error; }
 */
export class TimeoutError extends AnnalError {
  constructor(message: string, given: WorkflowErrorOptions = {}) {
    super("WF_TIMEOUT", message, options("WF_TIMEOUT", given));
  }
}

/** `flow.assert(condition, message)` found the condition falsy: `WF_ASSERTION`. */
export class AssertionError extends AnnalError {
  constructor(message: string, given: WorkflowErrorOptions = {}) {
    super("WF_ASSERTION", message, options("WF_ASSERTION", given));
  }
}

/** A step failed on every attempt its retry policy allows; `cause` is the last error. */
export class StepFailedError extends AnnalError {
  constructor(message: string, given: WorkflowErrorOptions = {}) {
    super("WF_STEP_FAILED", message, options("WF_STEP_FAILED", given));
  }
}

/** A child ended without a result (cancelled). */
export class ChildFailedError extends AnnalError {
  constructor(message: string, given: WorkflowErrorOptions = {}) {
    super("WF_CHILD_FAILED", message, options("WF_CHILD_FAILED", given));
  }
}

/**
 * The recorded history and the code disagree: at call `seq` the log has one call and the code
 * made another. The instance goes ERRORED with `WF_REPLAY_MISMATCH` instead of a wrong branch.
 */
export class ReplayMismatchError extends AnnalError {
  readonly seq: number;
  constructor(seq: number, recorded: string, made: string) {
    super(
      "WF_REPLAY_MISMATCH",
      `call ${seq}: the recorded history has ${recorded}, the code now makes ${made}`,
      { details: { seq, recorded, made } },
    );
    this.seq = seq;
  }
}

/** The classes a recorded error is rebuilt as on replay, by the name it was recorded with. */
const CLASSES: Readonly<
  Record<string, new (message: string, options: WorkflowErrorOptions) => AnnalError>
> = {
  NonRetryableError,
  ValidationError,
  TimeoutError,
  AssertionError,
  StepFailedError,
  ChildFailedError,
};

/** How the log keeps an error: its code, message and class name (never its stack). */
export function recordError(error: unknown): RecordedError {
  if (error instanceof AnnalError) {
    return { code: error.code, message: error.message, name: error.name };
  }
  const { code, message, name } = (error ?? {}) as {
    code?: unknown;
    message?: unknown;
    name?: unknown;
  };
  return {
    code: typeof code === "string" && code !== "" ? code : "WF_UNCAUGHT_ERROR",
    message: typeof message === "string" ? message : String(error),
    name: typeof name === "string" ? name : "Error",
  };
}

/**
 * The error a replay throws where the log recorded `recorded`: the same class and code, so
 * that workflow code catches it the way it did the first time.
 */
export function errorFromRecord(recorded: RecordedError): Error {
  const Class = CLASSES[recorded.name];
  if (Class) {
    const kind = new Class("", {}).code;
    return new Class(recorded.message, recorded.code === kind ? {} : { code: recorded.code });
  }
  if (isErrorCode(recorded.code)) {
    return new AnnalError(recorded.code, recorded.message);
  }
  const error = new Error(recorded.message) as Error & { code: string };
  error.name = recorded.name;
  error.code = recorded.code;
  return error;
}

/** A command refused: its code says why (the spec's WF_* refusals). */
export class WorkflowRefusal extends AnnalError {
  constructor(
    code: "WF_NOT_FOUND" | "WF_FORBIDDEN" | "WF_CONFLICT" | "WF_LOCKED" | "WF_VALIDATION",
    message: string,
    details: Readonly<Record<string, unknown>> = {},
  ) {
    super(code, message, {
      details,
      ...(code === "WF_LOCKED" ? { headers: { "retry-after": "1" } } : {}),
    });
  }
}
