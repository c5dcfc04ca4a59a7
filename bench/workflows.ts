import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { startJobs, type Jobs } from "../src/jobs/index.ts";
import { EventStore, readStream } from "../src/store/index.ts";
import {
  deployDefinitions,
  startWorkflow,
  startWorkflowEngine,
  type EngineDeps,
} from "../src/workflow/index.ts";
import { benchDatabase, fmt, machine, percentile, recordResults, time } from "./support.ts";

const CHAINS = 20;
const STEPS = 100;
const LATENCY_STARTS = 200;
const silent = { info() {}, warn() {}, error() {} };

const CHAIN = `
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
`;

const actor = { accountId: "bench", name: "bench", dn: null, principals: [], access: [] };

/**
 * Steps per second of chains of no-op steps, the engine against raw pg-boss jobs doing the
 * same (each job queues the next of its chain), in the same run on the same database; and the
 * latency from a start's commit to its first step.
 */
export async function workflowsBenchmark(): Promise<void> {
  const dir = path.resolve(import.meta.dirname, `.workflows-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "chain.ts"), CHAIN);
  const db = await benchDatabase();
  const jobs = await startJobs({ pool: db.pool, log: silent });
  try {
    const raw = await rawChains(jobs);
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
    const engine = await startWorkflowEngine({ ...deps, concurrency: 8 });
    try {
      const chains = await engineChains(deps);
      const firstStep = await startLatency(deps);
      report(raw, chains, firstStep);
    } finally {
      await engine.stop();
    }
  } finally {
    await jobs.stop();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

interface ChainFigures {
  readonly stepsPerSecond: number;
  /** Milliseconds between one step's outcome and the next step's start, per step. */
  readonly gaps: readonly number[];
}

async function engineChains(deps: EngineDeps): Promise<ChainFigures> {
  const ids: string[] = [];
  const seconds = await time(async () => {
    for (let i = 0; i < CHAINS; i++) {
      ids.push(
        (await startWorkflow(deps, { name: "chain", parameters: { steps: STEPS }, as: actor }))
          .instanceId,
      );
    }
    await until(async () => {
      const done = await deps.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM events WHERE type = 'WorkflowCompleted'",
      );
      return done.rows[0]!.n === CHAINS;
    });
  });
  const gaps: number[] = [];
  for (const id of ids) {
    const events = await readStream(deps.pool, `workflow-${id}`);
    const scheduled = events.filter((e) => e.type === "StepScheduled");
    for (let i = 1; i < scheduled.length; i++) {
      gaps.push(scheduled[i]!.recordedAt.getTime() - scheduled[i - 1]!.recordedAt.getTime());
    }
  }
  return { stepsPerSecond: (CHAINS * STEPS) / seconds, gaps: gaps.sort((a, b) => a - b) };
}

/** The baseline: each job of a chain, once done, queues the next; the same worker options. */
async function rawChains(jobs: Jobs): Promise<ChainFigures> {
  const queue = "bench-raw-chain";
  await jobs.ensureQueue(queue, { notify: true });
  const gaps: number[] = [];
  let done = 0;
  const worker = await jobs.boss.work<{ chain: number; step: number; sentAt: number }>(
    queue,
    { batchSize: 8, burstWhenBatchFull: true, pollingIntervalSeconds: 0.5 },
    async (batch) => {
      await Promise.all(
        batch.map(async (job) => {
          if (job.data.step > 0) gaps.push(Date.now() - job.data.sentAt);
          if (job.data.step + 1 < STEPS) {
            await jobs.boss.send(queue, {
              ...job.data,
              step: job.data.step + 1,
              sentAt: Date.now(),
            });
          } else {
            done++;
          }
        }),
      );
    },
  );
  const seconds = await time(async () => {
    for (let chain = 0; chain < CHAINS; chain++) {
      await jobs.boss.send(queue, { chain, step: 0, sentAt: Date.now() });
    }
    await until(() => done === CHAINS);
  });
  await jobs.boss.offWork(queue, { id: worker, wait: true });
  return { stepsPerSecond: (CHAINS * STEPS) / seconds, gaps: gaps.sort((a, b) => a - b) };
}

/** From a start's return (its commit) to its first step's StepScheduled, one start at a time. */
async function startLatency(deps: EngineDeps): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < LATENCY_STARTS; i++) {
    const started = Date.now();
    const { instanceId } = await startWorkflow(deps, {
      name: "chain",
      parameters: { steps: 1 },
      as: actor,
    });
    const first = await until(async () => {
      const events = await readStream(deps.pool, `workflow-${instanceId}`, { limit: 2 });
      return events.find((e) => e.type === "StepScheduled");
    });
    latencies.push(first.recordedAt.getTime() - started);
  }
  return latencies.sort((a, b) => a - b);
}

async function until<T>(check: () => T | Promise<T>): Promise<NonNullable<T>> {
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function report(raw: ChainFigures, engine: ChainFigures, firstStep: readonly number[]): void {
  const ms = (values: readonly number[], p: number) => fmt(percentile(values, p), 1);
  recordResults(
    "workflows",
    `## Workflow engine

Command: \`npm run bench -- workflows\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}

${CHAINS} chains of ${STEPS} no-op steps at once (${fmt(CHAINS * STEPS)} steps). The engine advances
8 instances at a time, each step recorded (its \`StepScheduled\`, which carries the step before's
completion) before it begins. The baseline is raw pg-boss doing the same in the same run on the same database: each
job, once handled, queues the next of its chain (batch 8, LISTEN/NOTIFY wake-ups, 0.5 s poll).

| measure | engine | raw pg-boss | ratio |
| --- | ---: | ---: | ---: |
| steps per second | ${fmt(engine.stepsPerSecond)} | ${fmt(raw.stepsPerSecond)} | ${fmt(engine.stepsPerSecond / raw.stepsPerSecond, 2)} |
| dispatch latency p50 / p99 (ms), one step to the next | ${ms(engine.gaps, 50)} / ${ms(engine.gaps, 99)} | ${ms(raw.gaps, 50)} / ${ms(raw.gaps, 99)} | |

Start to first step (a start's commit to its first \`StepScheduled\`, ${LATENCY_STARTS} starts one
after another, the engine idle between): p50 ${ms(firstStep, 50)} ms, p99 ${ms(firstStep, 99)} ms.
`,
  );
  process.stderr.write(
    `bench: workflows: ${fmt(engine.stepsPerSecond)} steps/s vs raw ${fmt(raw.stepsPerSecond)}; first step p50 ${ms(firstStep, 50)} ms\n`,
  );
}
