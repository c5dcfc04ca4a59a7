import { randomUUID } from "node:crypto";
import { annalEvent } from "../events/index.ts";
import { AnnalError } from "../errors/index.ts";
import { validate } from "../schema/index.ts";
import type { CallRecord } from "../../projections/workflows/index.ts";
import { childTimeout, toJson } from "./call-records.ts";
import type { Until } from "./define.ts";
import { ChildFailedError, ValidationError } from "./errors.ts";
import type { RunContext } from "./replay-run.ts";
import { deadline, passed } from "./time.ts";

/**
 * Starts the child of call `seq` (`flow.start` where the log has no such call yet): its
 * parameters checked against the deployed child's schema, `ChildStarted` recorded, and the
 * child's `WorkflowStarted` on its own stream, its wake and its deadline timer, as effects of
 * the run (appended with the parent's events).
 */
export async function startChild(
  run: RunContext,
  seq: number,
  name: string,
  version: number,
  parameters: unknown,
  until: Until | undefined,
): Promise<void> {
  const found = await run.deps.childDefinition(name, version);
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
  const now = run.now();
  const callUntil = deadline(until, now, run.state().until, run.deps.calendars);
  const childUntil = deadline(found.until, now, callUntil, run.deps.calendars);
  const childId = randomUUID();
  run.record("ChildStarted", { seq, childId, definition: { name, version }, until: callUntil });
  run.effects.others.push({
    streamId: `workflow-${childId}`,
    events: [
      annalEvent("WorkflowStarted", {
        instanceId: childId,
        definition: { name, version, hash: found.hash },
        parameters: toJson(checked.value),
        startedBy: run.state().startedBy,
        until: childUntil,
        parent: { instanceId: run.instanceId, seq },
        startKey: null,
      }),
    ],
    expectedVersion: "no_stream",
  });
  run.effects.wakes.push(childId);
  if (childUntil)
    run.effects.timers.push({ instanceId: childId, dueAt: childUntil, reason: "deadline" });
  if (callUntil) run.timer(callUntil, `child ${seq}`);
}

/**
 * The outcome of a started child's call: its result once it completed (recording
 * `ChildCompleted` when the child's own stream says so first); `ChildFailedError` when it
 * was cancelled; `TimeoutError` once the call's deadline passed (the child is cancelled with
 * it). Undefined while the child runs: the parent waits.
 */
export async function childCallOutcome<R>(
  run: RunContext,
  seq: number,
  call: Extract<CallRecord, { kind: "child" }>,
): Promise<{ readonly result: R } | undefined> {
  if (call.state === "COMPLETED") return { result: call.result as R };
  if (call.state === "CANCELLED") {
    throw new ChildFailedError(`child ${call.definition.name} ${call.childId} was cancelled`);
  }
  if (call.state === "timed_out") throw childTimeout(call);
  const child = await run.deps.childOutcome(call.childId);
  if (child?.status === "COMPLETED" || child?.status === "CANCELLED") {
    const state = child.status;
    run.record("ChildCompleted", {
      seq,
      childId: call.childId,
      state,
      result: toJson(child.result ?? null),
      error: null,
    });
    if (state === "COMPLETED") return { result: child.result as R };
    throw new ChildFailedError(`child ${call.definition.name} ${call.childId} was cancelled`);
  }
  if (passed(call.until, run.now())) {
    run.record("DeadlinePassed", { seq, until: call.until! });
    // The child goes too: its parent no longer waits for it.
    if (child) {
      run.effects.others.push({
        streamId: `workflow-${call.childId}`,
        events: [
          annalEvent("WorkflowCancelled", {
            by: null,
            reason: "its parent's deadline for it passed",
          }),
        ],
        expectedVersion: child.version,
      });
      run.effects.wakes.push(call.childId);
    }
    throw childTimeout(call);
  }
  return undefined;
}
