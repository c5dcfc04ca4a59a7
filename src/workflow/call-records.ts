import type { CallRecord } from "../../projections/workflows/index.ts";
import { TimeoutError } from "./errors.ts";

/** A dialog's id: its instance and its call, so that an answer finds it without a lookup. */
export function dialogIdOf(instanceId: string, seq: number): string {
  return `${instanceId}.${seq}`;
}

/** A recorded call as a mismatch names it: `step "find owner"`, `dialog "approve"`. */
export function describeCall(call: CallRecord): string {
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

export function childTimeout(call: Extract<CallRecord, { kind: "child" }>): TimeoutError {
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
