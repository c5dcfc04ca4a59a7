import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { EventStore } from "../../src/store/index.ts";
import type { Calendars } from "../../src/time/index.ts";
import { startJobs, type Jobs } from "../../src/jobs/index.ts";
import {
  deployDefinitions,
  loadInstance,
  prepareDefinitions,
  startWorkflowEngine,
  StickyRuns,
  type Actor,
  type BindingSources,
  type Definitions,
  type EngineDeps,
  type InstanceState,
  type InstanceStatus,
  type PreparedDefinition,
  type WorkflowEngine,
} from "../../src/workflow/index.ts";
import { eventually } from "./eventually.ts";
import { testDatabase, type TestDatabase } from "./postgres.ts";

const silent = { info() {}, warn() {}, error() {} };

/** The engine of a fixture that runs none. */
const noEngine: WorkflowEngine = {
  sticky: new StickyRuns(0),
  fireTimers: () => Promise.reject(new Error("this fixture runs no engine")),
  sweep: () => Promise.reject(new Error("this fixture runs no engine")),
  stop: async () => {},
};

/** Files by name; a nested object is a folder. */
export interface Fixture {
  readonly [name: string]: string | Fixture;
}

/**
 * A directory of definition files inside the repository (so `zod` and `annal` resolve): the
 * test's own, so a second call replaces the first one's files (a deploy of new files).
 */
export function definitionsDir(t: { testdir(files: Fixture): string }, files: Fixture): string {
  return t.testdir(files);
}

/** Writes (or replaces) a definition file in `dir`. */
export function writeDefinition(dir: string, name: string, source: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, name), source);
}

export interface WorkflowFixture extends EngineDeps {
  readonly db: TestDatabase;
  readonly store: EventStore;
  readonly jobs: Jobs;
  readonly definitions: Definitions;
  readonly engine: WorkflowEngine;
  /** The instance's state as its events fold now. */
  state(instanceId: string): Promise<InstanceState>;
  /** Waits until the instance is in `status` (or `until` holds) and returns its state. */
  settled(
    instanceId: string,
    status: InstanceStatus | ((state: InstanceState) => boolean),
    timeoutMs?: number,
  ): Promise<InstanceState>;
  /** Deploys `dir` again and restarts the engine on it (a restart after a deploy). */
  redeploy(dir: string): Promise<WorkflowFixture>;
}

interface Test {
  teardown(fn: () => unknown): void;
}

/** A database of the test's own, the definitions of `dir` deployed, and a running engine. */
export async function workflowFixture(
  t: Test,
  options: {
    dir: string;
    bindings?: Partial<BindingSources>;
    /** The business calendars `"3bd"` deadlines count in. */
    calendars?: Calendars;
    db?: TestDatabase;
    stepsPerAdvance?: number;
    /** The engine's `stickyRuns` (default the engine's: 1,000; 0 keeps none, every wake replays). */
    stickyRuns?: number;
    /** Default true; false for a fixture that only gives commands (another process runs the engine). */
    startEngine?: boolean;
    /** Definitions deployed beside the files of `dir` (annal's own: the review item's). */
    builtIn?: readonly PreparedDefinition[];
  },
): Promise<WorkflowFixture> {
  const db = options.db ?? (await testDatabase(t));
  const store = await EventStore.open(db.pool);
  const jobs = await startJobs({ pool: db.pool, log: silent });
  const definitions = await deployDefinitions({
    pool: db.pool,
    store,
    ...(options.builtIn
      ? { prepared: [...(await prepareDefinitions(options.dir)), ...options.builtIn] }
      : { dir: options.dir }),
    log: silent,
  });
  const deps: EngineDeps = {
    pool: db.pool,
    store,
    jobs,
    definitions,
    bindings: { pool: db.pool, log: silent, ...options.bindings },
    log: silent,
    ...(options.stepsPerAdvance ? { stepsPerAdvance: options.stepsPerAdvance } : {}),
    ...(options.calendars ? { calendars: options.calendars } : {}),
  };
  const engine =
    options.startEngine === false
      ? undefined
      : await startWorkflowEngine({
          ...deps,
          timerIntervalMs: 100,
          ...(options.stickyRuns === undefined ? {} : { stickyRuns: options.stickyRuns }),
        });
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    await engine?.stop();
    await jobs.stop();
  };
  t.teardown(stop);
  const state = async (instanceId: string) => {
    const found = await loadInstance(deps.pool, instanceId);
    if (!found) throw new Error(`no instance ${instanceId}`);
    return found;
  };
  return {
    ...deps,
    db,
    store,
    jobs,
    definitions,
    engine: engine ?? noEngine,
    state,
    settled: (instanceId, status, timeoutMs = 20_000) =>
      eventually(
        async () => {
          const now = await state(instanceId);
          const ok = typeof status === "function" ? status(now) : now.status === status;
          return ok ? now : undefined;
        },
        {
          timeout: timeoutMs,
          what: `instance ${instanceId} to be ${typeof status === "string" ? status : "as expected"}`,
        },
      ),
    async redeploy(dir) {
      await stop();
      return workflowFixture(t, { ...options, dir, db });
    },
  };
}

/** An actor for commands: an account with the given access and principals. */
export function actor(
  name: string,
  options: { access?: string[]; principals?: string[] } = {},
): Actor {
  return {
    accountId: `00000000-0000-4000-8000-${Buffer.from(name).toString("hex").padEnd(12, "0").slice(0, 12)}`,
    name,
    dn: `uid=${name},ou=people,dc=example,dc=org`,
    principals: options.principals ?? [],
    access: options.access ?? [],
  };
}

/**
 * The step completions in an instance's events, in order, of either shape the log holds: a
 * `StepCompleted`, or the `completed` a `StepScheduled` carries for the step just before it.
 */
export function stepCompletions(
  events: readonly { readonly type: string; readonly data: unknown }[],
): { seq: number; result: unknown }[] {
  return events.flatMap((event) => {
    const data = event.data as {
      seq: number;
      result?: unknown;
      completed?: { seq: number; result?: unknown };
    };
    if (event.type === "StepCompleted") return [{ seq: data.seq, result: data.result ?? null }];
    if (event.type === "StepScheduled" && data.completed) {
      return [{ seq: data.completed.seq, result: data.completed.result ?? null }];
    }
    return [];
  });
}

/**
 * The log's step completions as SQL rows (`stream_id`, `seq`), of either shape (see
 * `stepCompletions`): a subquery to select from.
 */
export const STEP_COMPLETIONS = `(
  SELECT stream_id, (data->>'seq')::int AS seq FROM events WHERE type = 'StepCompleted'
  UNION ALL
  SELECT stream_id, (data->'completed'->>'seq')::int FROM events
   WHERE type = 'StepScheduled' AND data ? 'completed')`;
