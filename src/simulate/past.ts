import type { Queryable } from "../db/index.ts";
import {
  ENTRY_CHANGE_TYPES,
  type ActorRef,
  type EntryChange,
  type WorkflowStarted,
} from "../events/index.ts";
import { logOrder } from "../store/index.ts";
import { foldInstance, instanceEvents, type InstanceState } from "../workflow/index.ts";
import type { Period } from "./period.ts";
import { capturedWrite, type DirectoryWrite } from "./writes.ts";

/** A start of the deployed definition in the period: what the simulation starts again. */
export interface PastStart {
  /** The deployed instance it started. */
  readonly instanceId: string;
  readonly at: Date;
  readonly definition: { readonly name: string; readonly version: number };
  readonly parameters: unknown;
  readonly startedBy: ActorRef;
  /** The change event (its `ChangeEventReceived` id) or request that caused it, when recorded. */
  readonly causationId: string | null;
}

/** A dialog's answer or a request's, as the deployed instance got it. */
export interface PastAnswer {
  readonly kind: "dialog" | "request";
  /** The dialog's name, or the request's binding. */
  readonly name: string;
  /** Its rank among the instance's calls of that kind and name, from 0. */
  readonly occurrence: number;
  readonly answer: unknown;
  readonly by: ActorRef | null;
  /** Who could answer then (a dialog's assignees when it was answered). */
  readonly assignees: readonly string[];
  readonly at: Date;
}

/** What the deployed version did for one start, up to the period's end. */
export interface PastRun {
  readonly instanceId: string;
  readonly version: number;
  /** As of the period's end. */
  readonly status: string;
  readonly result: unknown;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly answers: readonly PastAnswer[];
  /** The directory changes it (and its children) caused, as capture recorded them. */
  readonly writes: readonly DirectoryWrite[];
}

/**
 * The starts of `name` in the period (not children: a parent starts those), from the live
 * log in log order (the store's log-order helper).
 */
export async function pastStarts(
  db: Queryable,
  name: string,
  period: Period,
): Promise<PastStart[]> {
  const result = await db.query<{
    data: WorkflowStarted;
    causation_id: string | null;
    occurred_at: Date;
  }>(
    `SELECT e.data, e.metadata->>'causationId' AS causation_id, e.occurred_at
       FROM events AS e
      WHERE e.type = 'WorkflowStarted' AND e.data->'definition'->>'name' = $1
        AND coalesce(jsonb_typeof(e.data->'parent'), 'null') = 'null'
        AND e.occurred_at >= $2 AND e.occurred_at <= $3
      ORDER BY ${logOrder("e")}`,
    [name, period.from, period.to],
  );
  return result.rows.map((row) => ({
    instanceId: row.data.instanceId,
    at: row.occurred_at,
    definition: { name: row.data.definition.name, version: row.data.definition.version },
    parameters: row.data.parameters,
    startedBy: row.data.startedBy,
    causationId: row.causation_id,
  }));
}

/** What the deployed instance `instanceId` did, as the log had it at the period's end. */
export async function pastRun(db: Queryable, instanceId: string, period: Period): Promise<PastRun> {
  const events = (await instanceEvents(db, instanceId)).filter(
    (event) => event.occurredAt.getTime() <= period.to.getTime(),
  );
  const state = foldInstance(events);
  const answers: PastAnswer[] = [];
  const seen = new Map<string, number>();
  const rank = (key: string) => {
    const n = seen.get(key) ?? 0;
    seen.set(key, n + 1);
    return n;
  };
  const ranks = new Map<number, number>();
  const assignees = new Map<number, readonly string[]>();
  for (const event of events) {
    const data = event.data as unknown as Record<string, unknown>;
    const seq = data.seq as number;
    if (event.type === "DialogOpened") {
      ranks.set(seq, rank(`dialog ${String(data.name)}`));
      assignees.set(seq, data.assignees as string[]);
    } else if (event.type === "DialogEscalated") {
      assignees.set(seq, data.assignees as string[]);
    } else if (event.type === "RequestSent") {
      ranks.set(seq, rank(`request ${String(data.name)}`));
    } else if (event.type === "DialogCompleted" || event.type === "RequestAnswered") {
      const call = state?.calls.get(seq);
      if (call?.kind !== "dialog" && call?.kind !== "request") continue;
      answers.push({
        kind: call.kind,
        name: call.name,
        occurrence: ranks.get(seq) ?? 0,
        answer: data.answer,
        by: (data.by as ActorRef | null) ?? null,
        assignees: assignees.get(seq) ?? [],
        at: event.occurredAt,
      });
    }
  }
  const children = state ? childrenOf(state) : [];
  return {
    instanceId,
    version: state?.definition.version ?? 0,
    status: state?.status ?? "UNKNOWN",
    result: state?.result ?? null,
    error: state?.error ? { code: state.error.code, message: state.error.message } : null,
    answers,
    writes: await causedWrites(db, [instanceId, ...children], period),
  };
}

function childrenOf(state: InstanceState): string[] {
  return [...state.calls.values()].flatMap((call) => (call.kind === "child" ? [call.childId] : []));
}

/**
 * The directory changes capture recorded with one of `instanceIds` as their correlation (a
 * step's write names its instance), in log order, with the step that caused each.
 */
async function causedWrites(
  db: Queryable,
  instanceIds: readonly string[],
  period: Period,
): Promise<DirectoryWrite[]> {
  const result = await db.query<{
    data: EntryChange;
    occurred_at: Date;
    step: string | null;
    acting_for: string | null;
  }>(
    `SELECT e.data, e.occurred_at, cause.data->>'name' AS step,
            cause.data->'actingFor'->>'dn' AS acting_for
       FROM events AS e
       LEFT JOIN events AS cause
         ON e.metadata->>'causationId' ~ '^[0-9a-fA-F-]{36}$'
        AND cause.id = (e.metadata->>'causationId')::uuid AND cause.type = 'StepScheduled'
      WHERE e.type = ANY($1) AND e.metadata->>'correlationId' = ANY($2)
        AND e.occurred_at >= $3 AND e.occurred_at <= $4
      ORDER BY ${logOrder("e")}`,
    [[...ENTRY_CHANGE_TYPES], instanceIds, period.from, period.to],
  );
  return result.rows.map((row) =>
    capturedWrite(row.data, row.occurred_at, row.step, row.acting_for),
  );
}
