import { randomUUID } from "node:crypto";
import { annalEvent } from "../events/index.ts";
import { appendToStreams, type NewEvent, type StreamAppend } from "../store/index.ts";
import { withTransaction } from "../db/index.ts";
import { validate } from "../schema/index.ts";
import { foldParked, loadInstance, probeCallSchema, type EngineDeps } from "./advance.ts";
import {
  actorRef,
  isAssignee,
  isOperator,
  maySeeDefinition,
  maySeeInstance,
  type Actor,
} from "./access.ts";
import { commit, insertTimers, own, wake, type Timer } from "./commit.ts";
import type { DeployedDefinition } from "./definitions.ts";
import { WorkflowRefusal } from "./errors.ts";
import { toJson } from "./call-records.ts";
import { databaseClock, lockInstance } from "./lock.ts";
import type { InstanceState } from "../../projections/workflows/index.ts";
import type { InstanceRun } from "./run.ts";
import { deadline, passed } from "./time.ts";
import { delegatorAmong } from "./delegation/index.ts";
import { runToFirstWait } from "./first-wait.ts";

/**
 * The commands people and systems give the engine. Each is refused with the spec's codes:
 * `WF_NOT_FOUND` for what does not exist and, alike, for what the account may not see;
 * `WF_FORBIDDEN` for what it sees but may not do; `WF_CONFLICT` for a resource no longer in
 * the state the command needs; `WF_VALIDATION` for a value its schema refuses; `WF_LOCKED`
 * while another command or an engine holds the instance. Each is recorded with the acting
 * account, and wakes the instance in the same transaction.
 */

export interface StartOptions {
  readonly name: string;
  /** Default: the version the files deploy now. */
  readonly version?: number;
  readonly parameters: unknown;
  readonly as: Actor;
  /** Makes the start idempotent: a second start with the key returns the first's instance. */
  readonly startKey?: string;
  /**
   * annal starts it itself (for a change event): the definition's start access, which is for
   * people, is not asked.
   */
  readonly trusted?: boolean;
  /** What caused the start (a change event), recorded as its metadata. */
  readonly cause?: { readonly causationId: string; readonly correlationId?: string };
}

export async function startWorkflow(
  deps: EngineDeps,
  options: StartOptions,
): Promise<{ readonly instanceId: string; readonly created: boolean }> {
  const found = await definitionToStart(deps, options);
  const key = startKeyOf(options);
  if (key) {
    const earlier = (await startedWith(deps, [key])).get(key);
    if (earlier) return { instanceId: earlier, created: false };
  }
  const start = await startAppend(deps, options, found, await databaseClock(deps.pool));
  const { instanceId, until } = start;
  try {
    await commit(deps, {
      appends: [start.append],
      wakes: [instanceId],
      timers: until ? [{ instanceId, dueAt: until, reason: "deadline" }] : [],
    });
  } catch (error) {
    // The same key started an instance in another transaction at the same moment.
    const earlier = key && (await startedWith(deps, [key])).get(key);
    if (earlier) return { instanceId: earlier, created: false };
    throw error;
  }
  if (key) {
    // A start with the key committed while this one waited: the store took this append for a
    // repeat of it and stored nothing, so the instance is that one (found so by a bulk start
    // racing this one, test/workflow/commands).
    const stored = (await startedWith(deps, [key])).get(key);
    if (stored !== undefined && stored !== instanceId)
      return { instanceId: stored, created: false };
  }
  return { instanceId, created: true };
}

/** `workflow-start:<startKey>`, the idempotency key of a start's `WorkflowStarted`. */
function startKeyOf(options: StartOptions): string | undefined {
  return options.startKey === undefined ? undefined : `workflow-start:${options.startKey}`;
}

/** The definition a start names, or `WF_NOT_FOUND` where there is none the starter may see. */
async function definitionToStart(
  deps: EngineDeps,
  options: StartOptions,
): Promise<DeployedDefinition> {
  const found = await findDefinition(deps, options.name, options.version);
  if (!found || (!options.trusted && !maySeeDefinition(options.as, found.definition))) {
    throw new WorkflowRefusal(
      "WF_NOT_FOUND",
      `no workflow ${options.name}${options.version === undefined ? "" : ` version ${options.version}`} is there to start`,
    );
  }
  return found;
}

/**
 * A start's new instance, its `WorkflowStarted` (keyed where the start has a key) and its
 * deadline from `now`; `WF_VALIDATION` where the parameters do not match the schema.
 */
async function startAppend(
  deps: EngineDeps,
  options: StartOptions,
  found: DeployedDefinition,
  now: Date,
): Promise<{
  instanceId: string;
  until: string | null;
  started: NewEvent;
  append: ReturnType<typeof own>;
}> {
  const checked = await validate(found.definition.parameters, options.parameters);
  if (!checked.ok) {
    throw new WorkflowRefusal(
      "WF_VALIDATION",
      `the parameters of ${found.name} do not match its schema: ${checked.issues.join("; ")}`,
      { issues: checked.issues },
    );
  }
  const instanceId = randomUUID();
  const until = deadline(found.definition.until, now, null, deps.calendars);
  const key = startKeyOf(options);
  const started: NewEvent = {
    ...annalEvent("WorkflowStarted", {
      instanceId,
      definition: { name: found.name, version: found.version, hash: found.hash },
      parameters: toJson(checked.value),
      startedBy: actorRef(options.as),
      until,
      parent: null,
      startKey: options.startKey ?? null,
    }),
    metadata: { actor: options.as.name, source: "workflow", ...options.cause },
    ...(key ? { idempotencyKey: key } : {}),
  };
  return { instanceId, until, started, append: own(instanceId, [started], "no_stream") };
}

/**
 * Starts many instances at once, each as `startWorkflow` would, with a constant number of
 * statements: the starts' keys looked up in one statement, the database's clock read once,
 * and every `WorkflowStarted`, its deadline's timer and its wake-up written in one transaction
 * (`appendToStreams`). For annal's own bulk work (a review campaign's items), where one
 * `startWorkflow` each cost a transaction (and its commit's flush) per instance. A start whose
 * key is stored already returns that instance (`created: false`); when another transaction
 * stores one of the keys meanwhile, the batch is rolled back and each start is made on its own
 * by `startWorkflow`, which settles that race. Answers in the order of `starts`.
 *
 * @throws WorkflowRefusal as `startWorkflow`: `WF_NOT_FOUND`, `WF_VALIDATION` (nothing started).
 */
export async function startWorkflows(
  deps: EngineDeps,
  starts: readonly StartOptions[],
  how: {
    /**
     * Each new instance's code is run at once until it first waits at a dialog
     * (`runToFirstWait`), and its `DialogOpened` and timers recorded with its start: no
     * wake-up for the engine to take (a campaign's 100,000 items each cost the engine an
     * advance before they could be decided). An instance whose code does anything else first
     * is woken as without it.
     */
    readonly untilFirstWait?: boolean;
  } = {},
): Promise<{ readonly instanceId: string; readonly created: boolean }[]> {
  if (starts.length === 0) return [];
  const untilFirstWait = how.untilFirstWait === true;
  const earlier = await startedWith(
    deps,
    starts.flatMap((start) => startKeyOf(start) ?? []),
  );
  const now = await databaseClock(deps.pool);
  const answers: { instanceId: string; created: boolean }[] = [];
  const appends: StreamAppend[] = [];
  const timers: Timer[] = [];
  const wakes: string[] = [];
  const seen = new Map<string, string>();
  for (const options of starts) {
    const key = startKeyOf(options);
    const known = key === undefined ? undefined : (earlier.get(key) ?? seen.get(key));
    if (known !== undefined) {
      answers.push({ instanceId: known, created: false });
      continue;
    }
    const found = await definitionToStart(deps, options);
    const start = await startAppend(deps, options, found, now);
    const { instanceId, until } = start;
    const waits = untilFirstWait
      ? await runToFirstWait(found.definition, start.started, instanceId, now, deps.calendars)
      : undefined;
    if (waits) {
      appends.push({ ...start.append, events: [start.started, ...waits.events] });
      timers.push(...waits.timers);
    } else {
      appends.push(start.append);
      wakes.push(instanceId);
    }
    if (until) timers.push({ instanceId, dueAt: until, reason: "deadline" });
    if (key) seen.set(key, instanceId);
    answers.push({ instanceId, created: true });
  }
  if (appends.length === 0) return answers;
  try {
    await withTransaction(deps.pool, async (tx) => {
      const stored = await appendToStreams(tx, appends);
      // A key stored by another transaction since the look-up: start each on its own.
      if (stored !== appends.reduce((n, append) => n + append.events.length, 0)) {
        throw new KeyRace();
      }
      await insertTimers(tx, timers);
      await wake(deps.jobs, tx, wakes);
    });
  } catch (error) {
    if (!(error instanceof KeyRace) && !isKeyConflict(error)) throw error;
    const one: { instanceId: string; created: boolean }[] = [];
    for (const options of starts) one.push(await startWorkflow(deps, options));
    return one;
  }
  return answers;
}

/** A bulk start met a key stored since its look-up (rolled back, then made one by one). */
class KeyRace extends Error {}

function isKeyConflict(error: unknown): boolean {
  return (error as { code?: string } | null)?.code === "23505";
}

async function findDefinition(
  deps: EngineDeps,
  name: string,
  version: number | undefined,
): Promise<DeployedDefinition | undefined> {
  return version === undefined
    ? deps.definitions.current(name)
    : deps.definitions.version(name, version);
}

/** The instance each of `keys` started (the idempotency key of its `WorkflowStarted`). */
async function startedWith(
  deps: EngineDeps,
  keys: readonly string[],
): Promise<Map<string, string>> {
  const started = new Map<string, string>();
  if (keys.length === 0) return started;
  const found = await deps.pool.query<{ key: string; instance_id: string }>(
    `SELECT e.idempotency_key AS key, e.data->>'instanceId' AS instance_id
       FROM events AS e WHERE e.idempotency_key = ANY($1::text[])`,
    [keys],
  );
  for (const row of found.rows) started.set(row.key, row.instance_id);
  return started;
}

/** The dialog's instance and call from its id (`<instanceId>.<seq>`). */
function parseDialogId(dialogId: string): { instanceId: string; seq: number } | undefined {
  const match = /^([0-9a-f-]{36})\.(\d{1,9})$/.exec(dialogId);
  return match ? { instanceId: match[1]!, seq: Number(match[2]) } : undefined;
}

/**
 * An assignee's answer to a pending dialog, checked with the dialog's own schema, recorded
 * with who gave it; the instance goes on.
 */
export async function completeDialog(
  deps: EngineDeps,
  options: { readonly dialogId: string; readonly answer: unknown; readonly as: Actor },
): Promise<{ readonly instanceId: string }> {
  const notFound = () => new WorkflowRefusal("WF_NOT_FOUND", `no dialog ${options.dialogId}`);
  const ref = parseDialogId(options.dialogId);
  if (!ref) throw notFound();
  return withInstance(deps, ref.instanceId, notFound, async (state, parked) => {
    const call = state.calls.get(ref.seq);
    if (call?.kind !== "dialog") throw notFound();
    const now = await databaseClock(deps.pool);
    // Not an assignee: perhaps a delegate of one, by a delegation in force now.
    const answeringFor = isAssignee(options.as, call.assignees)
      ? null
      : ((await delegatorAmong(deps.pool, options.as, call.assignees, now)) ?? null);
    if (!answeringFor && !maySeeInstance(options.as, state)) throw notFound();
    if (!answeringFor && !isAssignee(options.as, call.assignees)) {
      throw new WorkflowRefusal(
        "WF_FORBIDDEN",
        `${options.as.name} is not an assignee of dialog "${call.name}"`,
      );
    }
    // The rule for assignees holds for delegates: nobody decides their own request.
    if (answeringFor && state.startedBy.accountId === options.as.accountId) {
      throw new WorkflowRefusal(
        "WF_FORBIDDEN",
        `${options.as.name} started this instance and cannot answer its dialog "${call.name}" for ${answeringFor.name}`,
      );
    }
    if (call.state !== "pending" || state.status !== "WAITING" || passed(call.until, now)) {
      throw new WorkflowRefusal(
        "WF_CONFLICT",
        `dialog "${call.name}" is no longer pending (${call.state === "pending" ? "its deadline passed" : call.state})`,
      );
    }
    const answer = await checkAnswer(
      deps,
      { state, parked },
      ref.seq,
      options.answer,
      `dialog "${call.name}"`,
    );
    return [
      annalEvent("DialogCompleted", {
        seq: ref.seq,
        dialogId: options.dialogId,
        answer,
        by: actorRef(options.as),
        for: answeringFor,
      }),
    ];
  });
}

/**
 * The answer to a pending request, correlated by its key (from a change event, through
 * `context.workflows`). Answering again with the same answer is accepted and changes nothing
 * (a retried change event); with another, `WF_CONFLICT`.
 */
export async function answerRequest(
  deps: EngineDeps,
  options: {
    readonly key: string;
    readonly answer: unknown;
    readonly as?: Actor;
    readonly source?: string;
  },
): Promise<{ readonly instanceId: string; readonly recorded: boolean }> {
  const notFound = () =>
    new WorkflowRefusal("WF_NOT_FOUND", `no request has the key ${options.key}`);
  const match = /^([0-9a-f-]{36}):(\d{1,9})$/.exec(options.key);
  if (!match) throw notFound();
  const [, instanceId, seqText] = match;
  const seq = Number(seqText);
  let recorded = true;
  await withInstance(deps, instanceId!, notFound, async (state, parked) => {
    const call = state.calls.get(seq);
    if (call?.kind !== "request") throw notFound();
    if (call.state === "answered") {
      if (JSON.stringify(call.answer) === JSON.stringify(toJson(options.answer))) {
        recorded = false;
        return [];
      }
      throw new WorkflowRefusal("WF_CONFLICT", `the request ${options.key} was answered before`);
    }
    if (call.state !== "pending" || passed(call.until, await databaseClock(deps.pool))) {
      throw new WorkflowRefusal("WF_CONFLICT", `the request ${options.key} is no longer pending`);
    }
    const answer = await checkAnswer(
      deps,
      { state, parked },
      seq,
      options.answer,
      `request ${options.key}`,
    );
    return [
      annalEvent("RequestAnswered", {
        seq,
        key: options.key,
        answer,
        by: options.as ? actorRef(options.as) : null,
        source: options.source ?? null,
      }),
    ];
  });
  return { instanceId: instanceId!, recorded };
}

/** Cancels an instance (its starter or an operator): its live children go with it. */
export async function cancelInstance(
  deps: EngineDeps,
  options: { readonly instanceId: string; readonly as: Actor; readonly reason?: string },
): Promise<void> {
  const notFound = () => new WorkflowRefusal("WF_NOT_FOUND", `no instance ${options.instanceId}`);
  await withInstance(deps, options.instanceId, notFound, async (state) => {
    if (!maySeeInstance(options.as, state)) throw notFound();
    if (!isOperator(options.as) && state.startedBy.accountId !== options.as.accountId) {
      throw new WorkflowRefusal(
        "WF_FORBIDDEN",
        "cancelling an instance takes its starter or the operator access function",
      );
    }
    if (state.status === "COMPLETED" || state.status === "CANCELLED") {
      throw new WorkflowRefusal("WF_CONFLICT", `instance ${state.id} is ${state.status} already`);
    }
    return [
      annalEvent("WorkflowCancelled", {
        by: actorRef(options.as),
        reason: options.reason ?? "cancelled",
      }),
    ];
  });
}

/** Runs an ERRORED instance again from the call it failed at (operators). */
export async function retryInstance(
  deps: EngineDeps,
  options: { readonly instanceId: string; readonly as: Actor },
): Promise<void> {
  const notFound = () => new WorkflowRefusal("WF_NOT_FOUND", `no instance ${options.instanceId}`);
  await withInstance(deps, options.instanceId, notFound, async (state) => {
    if (!maySeeInstance(options.as, state)) throw notFound();
    if (!isOperator(options.as)) {
      throw new WorkflowRefusal(
        "WF_FORBIDDEN",
        "retrying an instance takes the operator access function",
      );
    }
    if (state.status !== "ERRORED") {
      throw new WorkflowRefusal(
        "WF_CONFLICT",
        `instance ${state.id} is ${state.status}, not ERRORED`,
      );
    }
    return [annalEvent("WorkflowRetried", { by: actorRef(options.as) })];
  });
}

/** How long a command waits for an instance's lock before `WF_LOCKED`: an advance's tail. */
const COMMAND_LOCK_WAIT_MS = 1000;

/**
 * Takes the instance's lock (`WF_LOCKED` when still held after a moment), lets `decide` read its state and say what
 * to record, and records that with a wake-up in one transaction.
 *
 * When this process's engine keeps the instance's run parked (`deps.sticky`), the state is
 * that run's with the few events after it, and `decide` gets the run if it may go on (its
 * code waits at the call being answered: `checkAnswer` takes the schema from it). Reading and
 * folding the whole stream, or replaying the code, would cost more the longer the instance.
 * The lock keeps every wake from taking the run meanwhile.
 */
async function withInstance(
  deps: EngineDeps,
  instanceId: string,
  notFound: () => Error,
  decide: (state: InstanceState, parked: InstanceRun | undefined) => Promise<NewEvent[]>,
): Promise<{ readonly instanceId: string }> {
  const lock = await lockInstance(deps.pool, instanceId, { waitMs: COMMAND_LOCK_WAIT_MS });
  if (!lock) {
    throw new WorkflowRefusal(
      "WF_LOCKED",
      `instance ${instanceId} is being advanced or changed; try again in a moment`,
    );
  }
  try {
    const kept = deps.sticky?.peek(instanceId);
    const { state, current } = kept
      ? await foldParked(deps, instanceId, kept)
      : { state: await loadInstance(deps.pool, instanceId), current: false };
    if (!state) throw notFound();
    const events = await decide(state, current ? kept : undefined);
    if (events.length > 0) {
      await commit(deps, {
        appends: [own(instanceId, events, state.version)],
        wakes: [instanceId],
      });
    }
    return { instanceId };
  } finally {
    await lock.release();
  }
}

/**
 * An answer checked with the schema the code gives at the call, as JSON: the parked run's, when
 * it waits at that call, else found by a probe that replays the code up to there.
 */
async function checkAnswer(
  deps: EngineDeps,
  instance: { readonly state: InstanceState; readonly parked: InstanceRun | undefined },
  seq: number,
  answer: unknown,
  what: string,
): Promise<unknown> {
  const { schema } =
    instance.parked?.schemaAt(seq) ?? (await probeCallSchema(deps, instance.state, seq));
  if (!schema) return toJson(answer);
  const checked = await validate(schema, answer);
  if (!checked.ok) {
    throw new WorkflowRefusal(
      "WF_VALIDATION",
      `the answer to ${what} does not match its schema: ${checked.issues.join("; ")}`,
      { issues: checked.issues },
    );
  }
  return toJson(checked.value);
}
