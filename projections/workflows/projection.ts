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
    // Every touched instance, call and dialog written by one statement each a batch: one
    // statement a row took most of the projection's time when a review campaign started
    // 100,000 instances (three statements each).
    const instances: InstanceRowValues[] = [];
    const calls: CallRowValues[] = [];
    const dialogs: DialogRowValues[] = [];
    for (const [id, list] of byInstance) {
      const state = foldInstance(list, priors.get(id));
      if (!state) continue;
      instances.push(instanceRow(state, list.at(-1)!));
      const touched = new Set(list.flatMap(callsOf));
      // A cancellation, a retry or a checkpoint changes calls without naming them.
      const all = list.some(
        (e) =>
          e.type === "WorkflowCancelled" ||
          e.type === "WorkflowRetried" ||
          e.type === "WorkflowCheckpointed",
      );
      for (const call of state.calls.values()) {
        if (call.kind === "value" || !(all || touched.has(call.seq))) continue;
        calls.push(callRow(state, call));
        if (call.kind === "dialog") dialogs.push(dialogRow(state, call));
      }
    }
    await writeInstances(context, instances);
    await writeCalls(context, calls);
    await writeDialogs(context, dialogs);
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

/** The columns of `workflow_instances`, in order. */
type InstanceRowValues = readonly unknown[];
type CallRowValues = readonly unknown[];
type DialogRowValues = readonly unknown[];

function instanceRow(state: InstanceState, last: InstanceEvent): InstanceRowValues {
  return [
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
  ];
}

/** The rows as one array a column, for `unnest`. */
function columns(rows: readonly (readonly unknown[])[], width: number): unknown[][] {
  return Array.from({ length: width }, (_, c) => rows.map((row) => row[c]));
}

async function writeInstances(
  { tx, table }: ProjectionContext,
  rows: readonly InstanceRowValues[],
): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO ${table("workflow_instances")} AS w (instance_id, definition, version, hash, status,
        started_by_id, started_by, started_at, updated_at, until, parent_id, parameters, result,
        error, state, position, transaction_id)
     SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[],
        $7::text[], $8::timestamptz[], $9::timestamptz[], $10::timestamptz[], $11::uuid[],
        $12::jsonb[], $13::jsonb[], $14::jsonb[], $15::jsonb[], $16::bigint[], $17::xid8[])
     ON CONFLICT (instance_id) DO UPDATE SET status = EXCLUDED.status,
       updated_at = EXCLUDED.updated_at, result = EXCLUDED.result, error = EXCLUDED.error,
       state = EXCLUDED.state, position = EXCLUDED.position,
       transaction_id = EXCLUDED.transaction_id`,
    columns(rows, 17),
  );
}

function callRow(
  state: InstanceState,
  call: Exclude<CallRecord, { kind: "value" }>,
): CallRowValues {
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
  return [
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
  ];
}

async function writeCalls(
  { tx, table }: ProjectionContext,
  rows: readonly CallRowValues[],
): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO ${table("workflow_steps")} AS s (instance_id, seq, kind, name, state, attempts,
        started_at, ended_at, result, error, child_id)
     SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::text[], $6::int[],
        $7::timestamptz[], $8::timestamptz[], $9::jsonb[], $10::jsonb[], $11::uuid[])
     ON CONFLICT (instance_id, seq) DO UPDATE SET state = EXCLUDED.state,
       attempts = EXCLUDED.attempts, ended_at = EXCLUDED.ended_at, result = EXCLUDED.result,
       error = EXCLUDED.error`,
    columns(rows, 11),
  );
}

function dialogRow(
  state: InstanceState,
  call: Extract<CallRecord, { kind: "dialog" }>,
): DialogRowValues {
  return [
    call.dialogId,
    state.id,
    call.seq,
    state.definition.name,
    call.name,
    // A list a row: unnest takes no ragged arrays, so each goes as JSON.
    JSON.stringify([...new Set(call.assignees.map(canonicalPrincipal))]),
    call.state,
    JSON.stringify(call.form ?? null),
    JSON.stringify(call.data ?? null),
    call.until,
    call.answer === undefined ? null : JSON.stringify(call.answer),
    call.by === undefined ? null : JSON.stringify(call.by),
    call.openedAt,
    call.endedAt ?? null,
    call.escalation === undefined ? null : JSON.stringify(call.escalation),
  ];
}

async function writeDialogs(
  { tx, table }: ProjectionContext,
  rows: readonly DialogRowValues[],
): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    `INSERT INTO ${table("dialogs")} AS d (dialog_id, instance_id, seq, workflow, name, assignees,
        state, form, data, until, answer, answered_by, opened_at, ended_at, escalation)
     SELECT r.dialog_id, r.instance_id, r.seq, r.workflow, r.name,
            ARRAY(SELECT jsonb_array_elements_text(r.assignees)), r.state, r.form, r.data,
            r.until, r.answer, r.answered_by, r.opened_at, r.ended_at, r.escalation
       FROM unnest($1::text[], $2::uuid[], $3::int[], $4::text[], $5::text[], $6::jsonb[],
            $7::text[], $8::jsonb[], $9::jsonb[], $10::timestamptz[], $11::jsonb[],
            $12::jsonb[], $13::timestamptz[], $14::timestamptz[], $15::jsonb[])
         AS r(dialog_id, instance_id, seq, workflow, name, assignees, state, form, data, until,
              answer, answered_by, opened_at, ended_at, escalation)
     ON CONFLICT (dialog_id) DO UPDATE SET state = EXCLUDED.state, answer = EXCLUDED.answer,
       answered_by = EXCLUDED.answered_by, ended_at = EXCLUDED.ended_at,
       assignees = EXCLUDED.assignees, escalation = EXCLUDED.escalation`,
    columns(rows, 15),
  );
}
