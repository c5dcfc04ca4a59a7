import type { Pool } from "../db/index.ts";
import type { DirectoryAt } from "../history/index.ts";
import { startJobs } from "../jobs/index.ts";
import { logOrder, type NewEvent } from "../store/index.ts";
import { EventStore } from "../store/index.ts";
import type { Calendars } from "../time/index.ts";
import {
  advanceInstance,
  completeDialog,
  databaseClock,
  loadInstance,
  startWorkflow,
  WAKE_QUEUE,
  type Actor,
  type Definitions,
  type EngineDeps,
  type InstanceState,
} from "../workflow/index.ts";
import { Recorders } from "./recorders.ts";
import { scratchDatabase, setScratchClock, stopScratchClock } from "./scratch.ts";
import type { DirectoryWrite } from "./writes.ts";

const silent = { info() {}, warn() {}, error() {} };
const FINAL = new Set(["COMPLETED", "ERRORED", "CANCELLED"]);

/** An answer a past person gives to the instance's open dialog. */
export interface PastDialogAnswer {
  /** Given once the dialog's escalation has reached this level (0: when it opens)... */
  readonly atLevel: number;
  /** ...and this long after that, in ms. */
  readonly afterMs: number;
  readonly as: Actor;
  readonly answer: unknown;
}

/** A start of a deployed definition in the past, and how its dialogs were answered then. */
export interface PastStartPlan {
  readonly at: Date;
  readonly name: string;
  readonly parameters: unknown;
  readonly startedBy: Actor;
  /** In order: each is given to the dialog open when its moment comes. */
  readonly answers: readonly PastDialogAnswer[];
}

/** One event of an enacted instance, to append to the live log as it is. */
export interface EnactedEvent {
  readonly streamId: string;
  readonly event: NewEvent & { readonly occurredAt: Date };
}

export interface Enacted {
  /** The instances' events, in the order the engine appended them (their moments ascending). */
  readonly events: readonly EnactedEvent[];
  /** The directory writes their steps made (noted, not made), each with its step's event. */
  readonly writes: readonly {
    readonly instanceId: string;
    readonly stepEvent: string;
    readonly write: DirectoryWrite;
  }[];
  /** Each plan's instance as it ended (or waits at `until`), in the plans' order. */
  readonly instances: readonly InstanceState[];
}

export interface EnactOptions {
  readonly live: Pool;
  /** The deployed definitions (the live log's stored versions). */
  readonly definitions: Definitions;
  readonly plans: readonly PastStartPlan[];
  /** The directory at a past moment, as the instances' steps read it. */
  readonly directoryAt: (at: Date) => Promise<DirectoryAt>;
  readonly base: string;
  readonly calendars?: Calendars;
  /** The clock stops here: what waits longer stays waiting. */
  readonly until: Date;
}

/**
 * Produces a past as the deployed engine would have recorded it: each planned start is run by
 * the real engine, in a scratch database whose clock is stopped and moved from moment to
 * moment (a start, an escalation or deadline, a planned answer), with the directory a recorder
 * that reads the past given and notes the writes. Every event is stamped with the scratch
 * clock's moment. The caller appends the events to the live log (the demo's seeded history);
 * the scratch database is dropped.
 */
export async function enactPast(options: EnactOptions): Promise<Enacted> {
  const scratch = await scratchDatabase(options.live);
  try {
    await stopScratchClock(scratch.pool);
    // The engine stamps its events when it appends them; here that is the stopped clock's
    // moment, the past being enacted.
    await scratch.pool.query(
      `CREATE FUNCTION annal_enacted_at() RETURNS trigger LANGUAGE plpgsql
         AS $$ BEGIN NEW.occurred_at := annal_now(); RETURN NEW; END $$`,
    );
    await scratch.pool.query(
      `CREATE TRIGGER annal_enacted_at BEFORE INSERT ON events
         FOR EACH ROW EXECUTE FUNCTION annal_enacted_at()`,
    );
    const jobs = await startJobs({ pool: scratch.pool, log: silent });
    try {
      await jobs.ensureQueue(WAKE_QUEUE); // wake-ups are queued, never taken: the loop advances
      const recorders = new Recorders(options.directoryAt, scratch.pool, options.base);
      const deps: EngineDeps = {
        pool: scratch.pool,
        store: await EventStore.open(scratch.pool),
        jobs,
        definitions: options.definitions,
        bindings: { pool: scratch.pool, log: silent, replace: recorders.replace },
        log: silent,
        ...(options.calendars ? { calendars: options.calendars } : {}),
      };
      const instanceIds = await drive(deps, options);
      const instances: InstanceState[] = [];
      for (const id of instanceIds) {
        const state = await loadInstance(scratch.pool, id);
        if (state) instances.push(state);
      }
      return {
        events: await enactedEvents(scratch.pool),
        writes: recorders.recording.writes,
        instances,
      };
    } finally {
      await jobs.stop();
    }
  } finally {
    await scratch.drop();
  }
}

/** The loop: start what is due, advance, answer what is due, then on to the next moment. */
async function drive(deps: EngineDeps, options: EnactOptions): Promise<string[]> {
  const pool = deps.pool;
  const plans = [...options.plans].sort((a, b) => a.at.getTime() - b.at.getTime());
  const ids = new Map<PastStartPlan, string>();
  /** Per plan: how many of its answers are given, and when the next one is due. */
  const given = new Map<PastStartPlan, number>();
  const due = new Map<PastStartPlan, Date>();
  if (plans[0]) await setScratchClock(pool, plans[0].at);
  for (let round = 0; round < 10_000; round++) {
    const now = await databaseClock(pool);
    for (const plan of plans) {
      if (ids.has(plan) || plan.at.getTime() > now.getTime()) continue;
      const { instanceId } = await startWorkflow(deps, {
        name: plan.name,
        parameters: plan.parameters,
        as: plan.startedBy,
        trusted: true,
      });
      ids.set(plan, instanceId);
    }
    await settle(deps, [...ids.values()]);
    for (const [plan, id] of ids) {
      const answer = plan.answers[given.get(plan) ?? 0];
      const state = await loadInstance(pool, id);
      const dialog = [...(state?.calls.values() ?? [])].find(
        (call) => call.kind === "dialog" && call.state === "pending",
      );
      if (!answer || !state || FINAL.has(state.status) || dialog?.kind !== "dialog") {
        due.delete(plan);
        continue;
      }
      const reached = dialog.escalation?.reached ?? 0;
      if (!due.has(plan) && reached >= answer.atLevel) {
        due.set(plan, new Date(now.getTime() + answer.afterMs));
      }
      if ((due.get(plan)?.getTime() ?? Infinity) > now.getTime()) continue;
      await completeDialog(deps, {
        dialogId: dialog.dialogId,
        answer: answer.answer,
        as: answer.as,
      });
      given.set(plan, (given.get(plan) ?? 0) + 1);
      due.delete(plan);
    }
    await settle(deps, [...ids.values()]);
    const timer = await pool.query<{ due: Date | null }>(
      "SELECT min(due_at) AS due FROM workflow_timers WHERE due_at > annal_now()",
    );
    const moments = [
      ...plans.filter((plan) => !ids.has(plan)).map((plan) => plan.at),
      ...due.values(),
      ...(timer.rows[0]?.due ? [timer.rows[0].due] : []),
    ].map((moment) => moment.getTime());
    const next = Math.min(...moments);
    if (moments.length === 0 || next > options.until.getTime()) break;
    if (next > now.getTime()) await setScratchClock(pool, new Date(next));
    await pool.query("DELETE FROM workflow_timers WHERE due_at <= annal_now()");
  }
  return plans.flatMap((plan) => (ids.has(plan) ? [ids.get(plan)!] : []));
}

/** Advances every live instance until none moves. */
async function settle(deps: EngineDeps, instanceIds: readonly string[]): Promise<void> {
  for (let round = 0; round < 1_000; round++) {
    let moved = false;
    for (const id of instanceIds) {
      const before = await loadInstance(deps.pool, id);
      if (!before || FINAL.has(before.status)) continue;
      await advanceInstance(deps, id);
      moved ||= (await loadInstance(deps.pool, id))?.version !== before.version;
    }
    if (!moved) return;
  }
}

/** Everything the engine appended in the scratch database, in log order. */
async function enactedEvents(scratch: Pool): Promise<EnactedEvent[]> {
  const result = await scratch.query<{
    id: string;
    stream_id: string;
    type: string;
    data: unknown;
    metadata: Record<string, unknown>;
    occurred_at: Date;
  }>(
    `SELECT e.id::text AS id, e.stream_id, e.type, e.data, e.metadata, e.occurred_at
       FROM events AS e ORDER BY ${logOrder("e")}`,
  );
  return result.rows.map((row) => ({
    streamId: row.stream_id,
    event: {
      id: row.id,
      type: row.type,
      data: row.data,
      metadata: row.metadata,
      occurredAt: row.occurred_at,
    },
  }));
}
