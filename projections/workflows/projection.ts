import {
  INSTANCE_EVENT_TYPES,
  type InstanceEventType,
  type RecordedAnnalEvent,
} from "../../src/events/index.ts";
import type { Projection, ProjectionContext } from "../../src/projector/index.ts";
import {
  canonicalPrincipal,
  foldInstance,
  stateFromJson,
  stateToJson,
  type CallRecord,
  type InstanceState,
} from "./fold.ts";
import { WORKFLOWS_PROJECTION, workflowTables } from "./tables.ts";

type InstanceEvent = RecordedAnnalEvent<InstanceEventType>;

/**
 * `workflows`: the instances (`workflow_instances`), each call of their code
 * (`workflow_steps`), and the dialogs, an inbox per assignee (`dialogs`). Each batch folds the
 * touched instances' new events onto the state kept with them, with the engine's own fold, so
 * the tables say what the engine would.
 */
export const workflowsProjection: Projection<InstanceEventType> = {
  name: WORKFLOWS_PROJECTION,
  version: 2,
  handles: INSTANCE_EVENT_TYPES,
  tables: workflowTables,
  async apply(events, context) {
    const byInstance = new Map<string, InstanceEvent[]>();
    for (const event of events) {
      const id = event.streamId.slice("workflow-".length);
      const list = byInstance.get(id) ?? [];
      list.push(event);
      byInstance.set(id, list);
    }
    const priors = await readStates(context, [...byInstance.keys()]);
    for (const [id, list] of byInstance) {
      const state = foldInstance(list, priors.get(id));
      if (!state) continue;
      const last = list.at(-1)!;
      await writeInstance(context, state, last);
      const touched = new Set(list.flatMap(callsOf));
      // A cancellation, a retry or a checkpoint changes calls without naming them.
      const all = list.some(
        (e) =>
          e.type === "WorkflowCancelled" ||
          e.type === "WorkflowRetried" ||
          e.type === "WorkflowCheckpointed",
      );
      for (const call of state.calls.values()) {
        if (all || touched.has(call.seq)) await writeCall(context, state, call);
      }
    }
  },
};

/** The calls an event names: its own, and the step a `StepScheduled` says completed before it. */
function callsOf(event: InstanceEvent): number[] {
  const data = event.data as { seq?: unknown };
  const own = typeof data.seq === "number" ? [data.seq] : [];
  return event.type === "StepScheduled" && event.data.completed
    ? [...own, event.data.completed.seq]
    : own;
}

async function readStates(
  { tx, table }: ProjectionContext,
  ids: readonly string[],
): Promise<Map<string, InstanceState>> {
  const rows = await tx.query<{ instance_id: string; state: unknown }>(
    `SELECT instance_id, state FROM ${table("workflow_instances")} WHERE instance_id = ANY($1::uuid[])`,
    [ids],
  );
  return new Map(rows.rows.map((row) => [row.instance_id, stateFromJson(row.state)]));
}

async function writeInstance(
  { tx, table }: ProjectionContext,
  state: InstanceState,
  last: InstanceEvent,
): Promise<void> {
  await tx.query(
    `INSERT INTO ${table("workflow_instances")} AS w (instance_id, definition, version, hash, status,
        started_by_id, started_by, started_at, updated_at, until, parent_id, parameters, result,
        error, state, position, transaction_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
     ON CONFLICT (instance_id) DO UPDATE SET status = EXCLUDED.status,
       updated_at = EXCLUDED.updated_at, result = EXCLUDED.result, error = EXCLUDED.error,
       state = EXCLUDED.state, position = EXCLUDED.position,
       transaction_id = EXCLUDED.transaction_id`,
    [
      state.id,
      state.definition.name,
      state.definition.version,
      state.definition.hash,
      state.status,
      state.startedBy.accountId,
      state.startedBy.name,
      state.startedAt,
      state.updatedAt,
      state.until,
      state.parent?.instanceId ?? null,
      JSON.stringify(state.parameters ?? null),
      state.result === undefined ? null : JSON.stringify(state.result),
      state.error === undefined ? null : JSON.stringify(state.error),
      JSON.stringify(stateToJson(state)),
      last.position,
      last.transactionId,
    ],
  );
}

async function writeCall(
  context: ProjectionContext,
  state: InstanceState,
  call: CallRecord,
): Promise<void> {
  const { tx, table } = context;
  if (call.kind === "value") return;
  const name =
    call.kind === "child" ? `${call.definition.name}@${call.definition.version}` : call.name;
  const started =
    call.kind === "step" || call.kind === "child"
      ? call.startedAt
      : call.kind === "dialog"
        ? call.openedAt
        : call.sentAt;
  const error = call.kind === "step" || call.kind === "child" ? (call.error ?? null) : null;
  const result =
    call.kind === "step" || call.kind === "child"
      ? call.result
      : call.kind === "dialog" || call.kind === "request"
        ? call.answer
        : undefined;
  await tx.query(
    `INSERT INTO ${table("workflow_steps")} AS s (instance_id, seq, kind, name, state, attempts,
        started_at, ended_at, result, error, child_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (instance_id, seq) DO UPDATE SET state = EXCLUDED.state,
       attempts = EXCLUDED.attempts, ended_at = EXCLUDED.ended_at, result = EXCLUDED.result,
       error = EXCLUDED.error`,
    [
      state.id,
      call.seq,
      call.kind,
      name,
      call.state,
      call.kind === "step" ? call.attempts : null,
      started,
      call.endedAt ?? null,
      result === undefined ? null : JSON.stringify(result),
      error === null ? null : JSON.stringify(error),
      call.kind === "child" ? call.childId : null,
    ],
  );
  if (call.kind !== "dialog") return;
  await tx.query(
    `INSERT INTO ${table("dialogs")} AS d (dialog_id, instance_id, seq, workflow, name, assignees,
        state, form, data, until, answer, answered_by, opened_at, ended_at, escalation)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
     ON CONFLICT (dialog_id) DO UPDATE SET state = EXCLUDED.state, answer = EXCLUDED.answer,
       answered_by = EXCLUDED.answered_by, ended_at = EXCLUDED.ended_at,
       assignees = EXCLUDED.assignees, escalation = EXCLUDED.escalation`,
    [
      call.dialogId,
      state.id,
      call.seq,
      state.definition.name,
      call.name,
      [...new Set(call.assignees.map(canonicalPrincipal))],
      call.state,
      JSON.stringify(call.form ?? null),
      JSON.stringify(call.data ?? null),
      call.until,
      call.answer === undefined ? null : JSON.stringify(call.answer),
      call.by === undefined ? null : JSON.stringify(call.by),
      call.openedAt,
      call.endedAt ?? null,
      call.escalation === undefined ? null : JSON.stringify(call.escalation),
    ],
  );
}
