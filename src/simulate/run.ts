import { accessAt } from "../auth/index.ts";
import type { Pool } from "../db/index.ts";
import { startJobs } from "../jobs/index.ts";
import type { Logger } from "../logger.ts";
import { EventStore } from "../store/index.ts";
import type { Calendars } from "../time/index.ts";
import {
  advanceInstance,
  answerRequest,
  completeDialog,
  databaseClock,
  Definitions,
  isAssignee,
  loadInstance,
  startWorkflow,
  WAKE_QUEUE,
  WorkflowRefusal,
  type ActorRef,
  type EngineDeps,
  type InstanceState,
} from "../workflow/index.ts";
import type { SimulatedDefinition } from "./definition-file.ts";
import type { PastAnswer, PastRun, PastStart } from "./past.ts";
import type { Period } from "./period.ts";
import { policyAnswer, type DialogFallback, type DialogPolicy } from "./policy.ts";
import { Recorders, type Recording } from "./recorders.ts";
import { scratchDatabase, setScratchClock, stopScratchClock } from "./scratch.ts";

const silent = { info() {}, warn() {}, error() {} };
const FINAL = new Set(["COMPLETED", "ERRORED", "CANCELLED"]);

/** How one dialog of a simulated instance was answered, or why it was not. */
export interface DialogDecision {
  readonly name: string;
  /** `approve`, `deny`, `as-answered`, `fallback approve`, ..., or `unanswered`. */
  readonly policy: string;
  readonly answer?: unknown;
  readonly by?: ActorRef;
  readonly at?: string;
  /** Why the policy's answer was not taken (not an assignee, a form it does not fit). */
  readonly refused?: { readonly code: string; readonly message: string };
}

/** One start, run again with the simulated definition. */
export interface SimulatedRun {
  readonly start: PastStart;
  /** Its refusal when the simulated definition would not have started (its parameters). */
  readonly refused?: { readonly code: string; readonly message: string };
  state?: InstanceState;
  /** The instance and its children, for the recorders' notes. */
  readonly instanceIds: readonly string[];
  readonly dialogs: DialogDecision[];
}

export interface RunOptions {
  readonly live: Pool;
  readonly simulated: SimulatedDefinition;
  readonly period: Period;
  readonly starts: readonly PastStart[];
  readonly past: ReadonlyMap<string, PastRun>;
  readonly dialogs: DialogPolicy;
  readonly fallback: DialogFallback;
  /** The directory's base, for `WorkflowDirectory.base`. */
  readonly base: string;
  readonly calendars?: Calendars;
  readonly log?: Pick<Logger, "info" | "warn" | "error">;
}

/** A dialog answer the simulation gives at a moment (the policy's, or the one given then). */
interface PlannedAnswer {
  readonly at: Date;
  readonly run: SimulatedRun;
  readonly kind: "dialog" | "request";
  readonly target: string;
  readonly answer: unknown;
  readonly as: ActorRef | null;
  readonly assignees: readonly string[];
  readonly policy: string;
}

/**
 * Runs the starts again, in a scratch database, with the real engine driven by hand: the
 * clock jumps from moment to moment (the next start, timer or planned answer) through the
 * period, each instance is advanced until it waits, and each dialog is answered by the policy.
 * What the instances did and what the recorders noted is returned; the scratch database is
 * dropped.
 */
export async function runSimulation(
  options: RunOptions,
): Promise<{ runs: SimulatedRun[]; recording: Recording; steps: Map<string, string> }> {
  const scratch = await scratchDatabase(options.live);
  try {
    await stopScratchClock(scratch.pool);
    const jobs = await startJobs({ pool: scratch.pool, log: silent });
    try {
      // Wake-ups are queued as the engine does, and never taken: this loop advances instead.
      await jobs.ensureQueue(WAKE_QUEUE);
      const recorders = new Recorders(options.live, scratch.pool, options.base);
      const { definition, hash } = options.simulated;
      const deps: EngineDeps = {
        pool: scratch.pool,
        store: await EventStore.open(scratch.pool),
        jobs,
        // The simulated definition in memory; children's stored versions from the live log.
        definitions: new Definitions(options.live, [
          { name: definition.name, version: definition.version, hash, definition },
        ]),
        bindings: { pool: scratch.pool, log: silent, replace: recorders.replace },
        log: options.log ?? silent,
        ...(options.calendars ? { calendars: options.calendars } : {}),
      };
      const simulation = new Simulation(deps, options);
      recorders.deployedWrites = (instanceId) => simulation.deployedWrites(instanceId);
      const runs = await simulation.run();
      const steps = await stepNames(scratch.pool);
      return { runs, recording: recorders.recording, steps };
    } finally {
      await jobs.stop();
    }
  } finally {
    await scratch.drop();
  }
}

class Simulation {
  readonly #deps: EngineDeps;
  readonly #options: RunOptions;
  readonly #runs: SimulatedRun[] = [];
  readonly #byInstance = new Map<string, SimulatedRun>();
  readonly #planned: PlannedAnswer[] = [];
  /** Dialogs and requests already planned for or decided, by `<instance>.<seq>`. */
  readonly #handled = new Set<string>();

  constructor(deps: EngineDeps, options: RunOptions) {
    this.#deps = deps;
    this.#options = options;
  }

  /** When the deployed run a simulated instance (or its child) re-enacts wrote, if any. */
  deployedWrites(instanceId: string): Date[] {
    const run = this.#byInstance.get(instanceId);
    const past = run && this.#options.past.get(run.start.instanceId);
    return (past?.writes ?? []).map((write) => new Date(write.at));
  }

  async run(): Promise<SimulatedRun[]> {
    const starts = [...this.#options.starts].sort((a, b) => a.at.getTime() - b.at.getTime());
    const pool = this.#deps.pool;
    await setScratchClock(pool, starts[0]?.at ?? this.#options.period.from);
    let next = 0;
    for (let rounds = 0; rounds < 100_000; rounds++) {
      const now = await databaseClock(pool);
      while (next < starts.length && starts[next]!.at.getTime() <= now.getTime()) {
        await this.#start(starts[next++]!);
      }
      await this.#settle();
      await this.#plan(now);
      const due = this.#planned.filter((p) => p.at.getTime() <= now.getTime());
      for (const answer of due) {
        this.#planned.splice(this.#planned.indexOf(answer), 1);
        await this.#answer(answer);
      }
      if (due.length > 0) continue;
      // Nothing more happens now: on to the next moment something does, within the period.
      const timer = await pool.query<{ due: Date | null }>(
        "SELECT min(due_at) AS due FROM workflow_timers",
      );
      const moments = [
        starts[next]?.at,
        timer.rows[0]?.due ?? undefined,
        ...this.#planned.map((p) => p.at),
      ].filter((m): m is Date => m !== undefined);
      if (moments.length === 0) break;
      const moment = new Date(Math.min(...moments.map((m) => m.getTime())));
      if (moment.getTime() > this.#options.period.to.getTime()) break;
      if (moment.getTime() > now.getTime()) await setScratchClock(pool, moment);
      // The timers due are reminders only: every instance is advanced below anyway.
      await pool.query("DELETE FROM workflow_timers WHERE due_at <= annal_now()");
    }
    for (const run of this.#runs) {
      const id = run.instanceIds[0];
      if (id) run.state = await loadInstance(pool, id);
    }
    return this.#runs;
  }

  async #start(start: PastStart): Promise<void> {
    const { definition } = this.#options.simulated;
    try {
      const { instanceId } = await startWorkflow(this.#deps, {
        name: definition.name,
        version: definition.version,
        parameters: start.parameters,
        as: actorOf(start.startedBy, []),
        // It was started then, by someone allowed to (or by a change event).
        trusted: true,
      });
      const run: SimulatedRun = { start, instanceIds: [instanceId], dialogs: [] };
      this.#runs.push(run);
      this.#byInstance.set(instanceId, run);
    } catch (error) {
      const { code, message } = error as { code?: string; message: string };
      this.#runs.push({
        start,
        refused: { code: code ?? "ANNAL_INTERNAL", message },
        instanceIds: [],
        dialogs: [],
      });
    }
  }

  /** Advances every live instance (and the children they start) until none moves. */
  async #settle(): Promise<void> {
    for (let round = 0; round < 10_000; round++) {
      let moved = false;
      for (const [instanceId, run] of [...this.#byInstance]) {
        const before = await loadInstance(this.#deps.pool, instanceId);
        if (!before || FINAL.has(before.status)) continue;
        await advanceInstance(this.#deps, instanceId);
        const after = await loadInstance(this.#deps.pool, instanceId);
        if (!after || after.version === before.version) continue;
        moved = true;
        for (const call of after.calls.values()) {
          if (call.kind === "child" && !this.#byInstance.has(call.childId)) {
            this.#byInstance.set(call.childId, run);
            (run.instanceIds as string[]).push(call.childId);
          }
        }
      }
      if (!moved) return;
    }
  }

  /** Plans the answers of dialogs and requests newly pending. */
  async #plan(now: Date): Promise<void> {
    for (const [instanceId, run] of this.#byInstance) {
      const state = await loadInstance(this.#deps.pool, instanceId);
      if (!state || FINAL.has(state.status)) continue;
      const past = this.#options.past.get(run.start.instanceId);
      const occurrences = new Map<string, number>();
      for (const call of state.calls.values()) {
        if (call.kind !== "dialog" && call.kind !== "request") continue;
        const key = `${call.kind} ${call.name}`;
        const occurrence = occurrences.get(key) ?? 0;
        occurrences.set(key, occurrence + 1);
        const id = `${instanceId}.${call.seq}`;
        if (call.state !== "pending" || this.#handled.has(id)) continue;
        this.#handled.add(id);
        const then = past?.answers.find(
          (a) => a.kind === call.kind && a.name === call.name && a.occurrence === occurrence,
        );
        if (call.kind === "request") {
          // Requests are answered by change events: as they were then, or not at all.
          if (then) this.#planAnswer(run, "request", call.key, then, now, "as-answered");
          continue;
        }
        const policy = this.#options.dialogs;
        if (policy === "as-answered" && then && then.by?.accountId !== "escalation") {
          this.#planAnswer(run, "dialog", call.dialogId, then, now, "as-answered");
          continue;
        }
        const decision = policy === "as-answered" ? this.#options.fallback : policy;
        if (decision === "unanswered") {
          run.dialogs.push({ name: call.name, policy: "unanswered" });
          continue;
        }
        // The policy answers at once, as the dialog's first assignee.
        const assignee = call.assignees[0] ?? "simulation";
        this.#planned.push({
          at: now,
          run,
          kind: "dialog",
          target: call.dialogId,
          answer: policyAnswer(call.form, decision === "approve"),
          as: {
            accountId: `simulation:${assignee}`,
            name: assignee,
            dn: assignee.includes("=") ? assignee : null,
          },
          assignees: [assignee],
          policy: policy === "as-answered" ? `fallback ${decision}` : decision,
        });
      }
    }
  }

  #planAnswer(
    run: SimulatedRun,
    kind: "dialog" | "request",
    target: string,
    then: PastAnswer,
    now: Date,
    policy: string,
  ): void {
    this.#planned.push({
      // When it was answered then; at once if that was before this dialog opened.
      at: then.at.getTime() > now.getTime() ? then.at : now,
      run,
      kind,
      target,
      answer: then.answer,
      as: then.by,
      assignees: then.assignees,
      policy,
    });
  }

  async #answer(planned: PlannedAnswer): Promise<void> {
    if (planned.kind === "request") {
      await answerRequest(this.#deps, {
        key: planned.target,
        answer: planned.answer,
        source: "simulation",
      }).catch(() => undefined); // its deadline passed first: it timed out, as it would have
      return;
    }
    const name = await this.#dialogName(planned.target);
    const as = await this.#answerer(planned);
    try {
      const [instanceId, seq] = splitDialogId(planned.target);
      const call = (await loadInstance(this.#deps.pool, instanceId))?.calls.get(seq);
      // Said plainly: the engine answers a stranger to the instance WF_NOT_FOUND.
      if (call?.kind === "dialog" && !isAssignee(as, call.assignees)) {
        throw new WorkflowRefusal(
          "WF_FORBIDDEN",
          `${as.name} is not an assignee of dialog "${call.name}" (${call.assignees.join("; ")})`,
        );
      }
      await completeDialog(this.#deps, { dialogId: planned.target, answer: planned.answer, as });
      planned.run.dialogs.push({
        name,
        policy: planned.policy,
        answer: planned.answer,
        by: planned.as ?? undefined,
        at: (await databaseClock(this.#deps.pool)).toISOString(),
      } as DialogDecision);
    } catch (error) {
      const { code, message } = error as { code?: string; message: string };
      const refused = { code: code ?? "ANNAL_INTERNAL", message };
      const fallback = this.#options.fallback;
      if (planned.policy !== "as-answered" || fallback === "unanswered") {
        planned.run.dialogs.push({ name, policy: planned.policy, refused });
        return;
      }
      planned.run.dialogs.push({ name, policy: planned.policy, refused });
      // Whoever answered then cannot answer this one: the fallback does, as its first assignee.
      const [instanceId, seq] = splitDialogId(planned.target);
      const state = await loadInstance(this.#deps.pool, instanceId);
      const call = state?.calls.get(seq);
      if (call?.kind !== "dialog" || call.state !== "pending") return;
      const assignee = call.assignees[0] ?? "simulation";
      await this.#answer({
        ...planned,
        answer: policyAnswer(call.form, fallback === "approve"),
        as: {
          accountId: `simulation:${assignee}`,
          name: assignee,
          dn: assignee.includes("=") ? assignee : null,
        },
        assignees: [assignee],
        policy: `fallback ${fallback}`,
      });
    }
  }

  /**
   * Who answers: the policy's stand-in (one of the assignees), or whoever answered then, with
   * the principals the access projection gave their account at that moment (their DN alone
   * for an account it does not know).
   */
  async #answerer(planned: PlannedAnswer) {
    const ref = planned.as ?? { accountId: "simulation", name: "simulation", dn: null };
    if (planned.policy !== "as-answered") return actorOf(ref, planned.assignees);
    const then = await accessAt(this.#options.live, { at: planned.at, account: ref.accountId });
    return actorOf(ref, then.accounts[0]?.principals ?? []);
  }

  async #dialogName(dialogId: string): Promise<string> {
    const [instanceId, seq] = splitDialogId(dialogId);
    const call = (await loadInstance(this.#deps.pool, instanceId))?.calls.get(seq);
    return call?.kind === "dialog" ? call.name : dialogId;
  }
}

function splitDialogId(dialogId: string): [string, number] {
  const at = dialogId.lastIndexOf(".");
  return [dialogId.slice(0, at), Number(dialogId.slice(at + 1))];
}

/** An account as the engine's commands take it, from how the log names it. */
function actorOf(ref: ActorRef, principals: readonly string[]) {
  return {
    accountId: ref.accountId,
    name: ref.name,
    dn: ref.dn,
    principals: [...(ref.dn ? [ref.dn] : []), ...principals],
    access: [],
  };
}

/** Each `StepScheduled` event's step name, for the recorders' notes. */
async function stepNames(scratch: Pool): Promise<Map<string, string>> {
  const result = await scratch.query<{ id: string; name: string }>(
    "SELECT e.id::text AS id, e.data->>'name' AS name FROM events AS e WHERE e.type = 'StepScheduled'",
  );
  return new Map(result.rows.map((row) => [row.id, row.name]));
}
