import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startJobs, type Jobs } from "../src/jobs/index.ts";
import type { Pool } from "../src/db/index.ts";
import { EventStore } from "../src/store/index.ts";
import {
  deployDefinitions,
  startWorkflowEngine,
  type Actor,
  type EngineDeps,
  type WorkflowEngine,
  type WorkflowEngineOptions,
} from "../src/workflow/index.ts";
import { benchDatabase, type BenchDatabase } from "./support.ts";

export const silent = { info() {}, warn() {}, error() {} };

export const benchActor: Actor = {
  accountId: "00000000-0000-4000-8000-000000000b01",
  name: "bench",
  dn: null,
  principals: [],
  access: [],
};

/** The engine benchmarks' definitions: chains of no-op steps, and a dialog between two steps. */
const DEFINITIONS = {
  "chain.ts": `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "chain",
  version: 1,
  parameters: z.object({ steps: z.number().int() }),
  async run(flow, { steps }) {
    for (let i = 0; i < steps; i++) await flow.step("step " + i, () => i);
    return steps;
  },
});
`,
  "approval.ts": `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "approval",
  version: 1,
  parameters: z.object({ n: z.number() }),
  async run(flow, { n }) {
    await flow.step("prepare", () => n);
    const { answer } = await flow.dialog({
      name: "approve",
      assignees: ["${benchActor.accountId}"],
      schema: z.object({ approved: z.boolean() }),
    });
    return await flow.step("apply", () => answer.approved);
  },
});
`,
};

export interface EngineBench {
  readonly db: BenchDatabase;
  readonly deps: EngineDeps;
  /** Starts an engine on the bench's database (stopped by `close`). */
  engine(options?: Partial<WorkflowEngineOptions>): Promise<WorkflowEngine>;
  close(): Promise<void>;
}

/** A fresh database with the engine benchmarks' definitions deployed, and pg-boss started. */
export async function engineBench(suite: string): Promise<EngineBench> {
  const dir = path.resolve(import.meta.dirname, `.${suite}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  for (const [name, source] of Object.entries(DEFINITIONS)) {
    writeFileSync(path.join(dir, name), source);
  }
  const db = await benchDatabase();
  const jobs: Jobs = await startJobs({ pool: db.pool, log: silent });
  const store = await EventStore.open(db.pool);
  const definitions = await deployDefinitions({ pool: db.pool, store, dir, log: silent });
  const deps: EngineDeps = {
    pool: db.pool,
    store,
    jobs,
    definitions,
    bindings: { pool: db.pool, log: silent },
    log: silent,
  };
  const engines: WorkflowEngine[] = [];
  return {
    db,
    deps,
    async engine(options = {}) {
      const engine = await startWorkflowEngine({ ...deps, concurrency: 8, ...options });
      engines.push(engine);
      return engine;
    },
    async close() {
      for (const engine of engines) await engine.stop();
      await jobs.stop();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls `check` every few milliseconds until it gives a value (benchmarks only). */
export async function until<T>(check: () => T | Promise<T>): Promise<NonNullable<T>> {
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** How many events of `type` the log holds. */
export async function countEvents(pool: Pool, type: string): Promise<number> {
  const result = await pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM events WHERE type = $1",
    [type],
  );
  return result.rows[0]!.n;
}
