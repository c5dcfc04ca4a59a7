import { randomUUID } from "node:crypto";
import { AnnalError } from "../errors/index.ts";
import type { ActorRef, DialogEscalationPlan } from "../events/index.ts";
import { jsonSchemaOf, type StandardSchemaV1 } from "../schema/index.ts";
import type { CallRecord } from "../../projections/workflows/index.ts";
import { dialogIdOf, toJson } from "./call-records.ts";
import type { DialogOptions } from "./define.ts";
import { ESCALATION_ACTOR, escalatedAssignees, planEscalation } from "./escalation.ts";
import type { RunContext } from "./replay-run.ts";
import { deadline, passed } from "./time.ts";

/**
 * Opens the dialog of call `seq` (`flow.dialog` where the log has no such call yet): its
 * deadline and escalation chain computed once from the run's clock and recorded with it in
 * `DialogOpened`, with a timer for the deadline and for each level that comes before it.
 */
export function openDialog<D extends StandardSchemaV1>(
  run: RunContext,
  seq: number,
  options: DialogOptions<D>,
): void {
  // Checked where first read (options exist only when run calls flow.dialog): one text would
  // otherwise be spread into its letters, each an assignee.
  const { assignees } = options as { assignees: unknown };
  if (
    !Array.isArray(assignees) ||
    assignees.some((each) => typeof each !== "string" || each === "")
  ) {
    throw new AnnalError(
      "WF_OPTIONS_INVALID",
      `flow.dialog: assignees is ${Array.isArray(assignees) ? "a list holding other than principals" : typeof assignees === "string" ? "one text, not a list" : `${assignees === null ? "null" : typeof assignees}, not a list`}`,
      { hint: 'assignees takes a list of principals (account ids, group DNs): ["<group DN>"]' },
    );
  }
  const now = run.now();
  let until = deadline(options.until, now, run.state().until, run.deps.calendars);
  let escalation: DialogEscalationPlan | undefined;
  if (options.escalation) {
    ({ plan: escalation, until } = planEscalation(
      options.escalation,
      now,
      until,
      run.deps.calendars,
    ));
    for (const [level, { at }] of escalation.levels.entries()) {
      if (until === null || at < until) run.timer(at, `dialog ${seq} escalation ${level}`);
    }
  }
  const dialogId = dialogIdOf(run.instanceId, seq);
  run.record("DialogOpened", {
    seq,
    dialogId,
    name: options.name,
    assignees: [...options.assignees],
    form: jsonSchemaOf(options.schema),
    data: toJson(options.data ?? null),
    until,
    // A chain without a final answer records none (not null): its dialog times out.
    ...(escalation
      ? {
          escalation:
            escalation.finalAnswer === undefined
              ? escalation
              : { ...escalation, finalAnswer: toJson(escalation.finalAnswer) },
        }
      : {}),
  });
  if (until) run.timer(until, `dialog ${seq}`);
}

/**
 * Records the levels of a pending dialog's escalation chain that have come (each reads its
 * assignees once; the event keeps them), and at the chain's end its final answer, if it has
 * one (otherwise the deadline times the dialog out as any other).
 */
export async function escalateDialog(
  run: RunContext,
  call: Extract<CallRecord, { kind: "dialog" }>,
  options: DialogOptions<StandardSchemaV1>,
): Promise<{ answer: unknown; by: ActorRef; for: null } | undefined> {
  const plan = call.escalation!;
  const now = run.now();
  let assignees = call.assignees;
  for (let level = plan.reached; level < plan.levels.length; level++) {
    const { at, mode } = plan.levels[level]!;
    // A level not yet come, or one set at or after the dialog's end, never comes.
    if (!passed(at, now) || (call.until !== null && at >= call.until)) break;
    const declared = options.escalation?.levels[level];
    if (!declared) break; // the code no longer declares this level: the chain stops here
    const found = await escalatedAssignees(declared.assignees, mode, assignees, () =>
      // A read only: no step, so no StepScheduled event for the cause to name.
      run.deps.services({
        instanceId: run.instanceId,
        eventId: randomUUID(),
        actingFor: null,
      }),
    );
    assignees = found.assignees;
    run.record("DialogEscalated", {
      seq: call.seq,
      dialogId: call.dialogId,
      level,
      assignees: [...assignees],
      ...(found.error ? { error: found.error } : {}),
    });
  }
  if (plan.finalAnswer !== undefined && passed(call.until, now)) {
    run.record("DialogCompleted", {
      seq: call.seq,
      dialogId: call.dialogId,
      answer: plan.finalAnswer,
      by: ESCALATION_ACTOR,
    });
    return { answer: plan.finalAnswer, by: ESCALATION_ACTOR, for: null };
  }
  return undefined;
}
