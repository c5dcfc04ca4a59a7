import type { Pool } from "../db/index.ts";
import type { Logger } from "../logger.ts";
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

/** The engine's log while the past is enacted: nothing of a scratch database is worth saying. */
export const silent = { info() {}, warn() {}, error() {} };
/** An instance's states from which it moves no more. */
export const FINAL: ReadonlySet<string> = new Set(["COMPLETED", "ERRORED", "CANCELLED"]);

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
  readonly log?: Pick<Logger, "warn">;
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
    await stampedByStoppedClock(scratch.pool);
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
    // Dropping a database waits for a checkpoint: seconds on a busy server, which the first
    // start need not wait for. A failure only leaves the scratch database behind; it says so.
    scratch.drop().catch((error: unknown) => {
      options.log?.warn(
        { err: error },
        "a scratch database of the demo's past requests could not be dropped",
      );
    });
  }
}

/**
 * Stops the scratch database's clock, and stamps every event appended to it with the clock's
 * moment: the engine stamps its events when it appends them, and here that is the moment of
 * the past being enacted.
 */
export async function stampedByStoppedClock(scratch: Pool): Promise<void> {
  await stopScratchClock(scratch);
  await scratch.query(
    `CREATE FUNCTION annal_enacted_at() RETURNS trigger LANGUAGE plpgsql
       AS $$ BEGIN NEW.occurred_at := annal_now(); RETURN NEW; END $$`,
  );
  await scratch.query(
    `CREATE TRIGGER annal_enacted_at BEFORE INSERT ON events
       FOR EACH ROW EXECUTE FUNCTION annal_enacted_at()`,
  );
}

/**
 * Runs each plan alone, one after the other (their steps read the past given, not each
 * other's writes): start it, advance it, answer its dialog when the answer is due, and move
 * the clock to its next moment (an answer, an escalation, a deadline) until it ends or `until`.
 */
async function drive(deps: EngineDeps, options: EnactOptions): Promise<string[]> {
  const pool = deps.pool;
  const ids: string[] = [];
  for (const plan of [...options.plans].sort((a, b) => a.at.getTime() - b.at.getTime())) {
    await setScratchClock(pool, plan.at);
    const { instanceId } = await startWorkflow(deps, {
      name: plan.name,
      parameters: plan.parameters,
      as: plan.startedBy,
      trusted: true,
    });
    ids.push(instanceId);
    let given = 0;
    let due: Date | undefined;
    for (let round = 0; round < 1_000; round++) {
      const now = await databaseClock(pool);
      let state = await settle(deps, instanceId);
      const answer = plan.answers[given];
      const dialog = [...(state?.calls.values() ?? [])].find(
        (call) => call.kind === "dialog" && call.state === "pending",
      );
      if (!state || FINAL.has(state.status)) break;
      if (answer && dialog?.kind === "dialog") {
        if (!due && (dialog.escalation?.reached ?? 0) >= answer.atLevel) {
          due = new Date(now.getTime() + answer.afterMs);
        }
        if (due && due.getTime() <= now.getTime()) {
          await completeDialog(deps, {
            dialogId: dialog.dialogId,
            answer: answer.answer,
            as: answer.as,
          });
          given++;
          due = undefined;
          state = await settle(deps, instanceId);
          if (!state || FINAL.has(state.status)) break;
        }
      }
      const timer = await pool.query<{ due: Date | null }>(
        `SELECT min(due_at) AS due FROM workflow_timers
          WHERE instance_id = $1 AND due_at > annal_now()`,
        [instanceId],
      );
      const moments = [due, timer.rows[0]?.due ?? undefined]
        .filter((moment): moment is Date => moment !== undefined)
        .map((moment) => moment.getTime());
      const next = Math.min(...moments);
      if (moments.length === 0 || next > options.until.getTime()) break;
      await setScratchClock(pool, new Date(next));
      await pool.query("DELETE FROM workflow_timers WHERE instance_id = $1 AND due_at <= $2", [
        instanceId,
        new Date(next),
      ]);
    }
  }
  return ids;
}

/** Advances the instance until it waits or ends; its state then. */
export async function settle(
  deps: EngineDeps,
  instanceId: string,
): Promise<InstanceState | undefined> {
  let state = await loadInstance(deps.pool, instanceId);
  for (let round = 0; round < 1_000 && state && !FINAL.has(state.status); round++) {
    await advanceInstance(deps, instanceId);
    const after = await loadInstance(deps.pool, instanceId);
    if (after?.version === state.version) return after;
    state = after;
  }
  return state;
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
