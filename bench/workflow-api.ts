/**
 * `npm run bench -- workflow-api`: the workflow commands as a client meets them, over HTTP
 * through GraphQL with a bearer token: from sending `startWorkflow` to the instance's first
 * step being recorded, and from sending `completeDialog` to the step after the dialog. The
 * baseline, in the same run against the same server, is the round trip of the smallest
 * authenticated GraphQL query (`{ viewer { id } }`).
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import Fastify, { type FastifyBaseLogger } from "fastify";
import { createAuthentication, createToken } from "../src/auth/index.ts";
import { parseConfig } from "../src/config/index.ts";
import { graphqlPlugin } from "../src/graphql/index.ts";
import { startJobs } from "../src/jobs/index.ts";
import { createLogger } from "../src/logger.ts";
import { EventStore, readStream } from "../src/store/index.ts";
import { deployDefinitions, startWorkflowEngine, type EngineDeps } from "../src/workflow/index.ts";
import { benchDatabase, fmt, machine, percentile, recordResults } from "./support.ts";

const WARMUP = 20;
const RUNS = 200;
const silent = { info() {}, warn() {}, error() {} };

const APPROVAL = `
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
      assignees: ["service:bench"],
      schema: z.object({ approved: z.boolean() }),
    });
    return await flow.step("apply", () => answer.approved);
  },
});
`;

export async function workflowApiBenchmark(): Promise<void> {
  const dir = path.resolve(import.meta.dirname, `.workflow-api-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, "approval.ts"), APPROVAL);
  const db = await benchDatabase();
  const jobs = await startJobs({ pool: db.pool, log: silent });
  const server = Fastify({ loggerInstance: createLogger("silent") as FastifyBaseLogger });
  try {
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
      const config = parseConfig(`[log]\nlevel = "silent"\n`, {
        path: "bench.toml",
        env: {},
        cwd: process.cwd(),
      });
      const { token } = await createToken(db.pool, store, { name: "bench", access: [] });
      await server.register(
        graphqlPlugin({
          pool: db.pool,
          authentication: createAuthentication({ pool: db.pool }),
          directory: undefined,
          config,
          log: createLogger("silent"),
          workflows: deps,
        }),
      );
      const url = `${await server.listen({ host: "127.0.0.1", port: 0 })}/graphql`;
      const post = async (query: string, variables?: unknown) => {
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
          body: JSON.stringify({ query, variables }),
        });
        const json = (await response.json()) as { data?: Record<string, { id: string }> };
        if (!json.data) throw new Error(`bad answer: ${JSON.stringify(json).slice(0, 300)}`);
        return json.data;
      };
      /** Waits for the instance's step `name` to be scheduled, and returns when it was. */
      const scheduled = async (instanceId: string, name: string): Promise<number> => {
        for (;;) {
          const events = await readStream(db.pool, `workflow-${instanceId}`);
          const found = events.find(
            (e) => e.type === "StepScheduled" && (e.data as { name: string }).name === name,
          );
          if (found) return found.recordedAt.getTime();
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
      };
      const run = async () => {
        let sent = Date.now();
        const started = await post(
          `mutation($p: JSON!) { startWorkflow(name: "approval", parameters: $p) { id } }`,
          { p: { n: Math.random() } },
        );
        const id = started.startWorkflow!.id;
        const first = (await scheduled(id, "prepare")) - sent;
        // The dialog is open once the instance waits for it.
        let dialogId: string | undefined;
        while (!dialogId) {
          const events = await readStream(db.pool, `workflow-${id}`);
          const opened = events.find((e) => e.type === "DialogOpened");
          dialogId = opened && (opened.data as { dialogId: string }).dialogId;
          if (!dialogId) await new Promise((resolve) => setTimeout(resolve, 2));
        }
        sent = Date.now();
        await post(
          `mutation($id: ID!) { completeDialog(id: $id, answer: { approved: true }) { id } }`,
          {
            id: dialogId,
          },
        );
        const next = (await scheduled(id, "apply")) - sent;
        return { first, next };
      };
      const viewer = async () => {
        const sent = performance.now();
        await post(`{ viewer { id } }`);
        return performance.now() - sent;
      };

      for (let i = 0; i < WARMUP; i++) {
        await run();
        await viewer();
      }
      const firsts: number[] = [];
      const nexts: number[] = [];
      const baseline: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const { first, next } = await run();
        firsts.push(first);
        nexts.push(next);
        baseline.push(await viewer());
      }
      for (const list of [firsts, nexts, baseline]) list.sort((a, b) => a - b);
      const p = (list: number[], q: number) => fmt(percentile(list, q), 1);
      const ratio = (list: number[]) => fmt(percentile(list, 50) / percentile(baseline, 50), 1);
      recordResults(
        "workflow-api",
        `## Workflow commands over HTTP

Command: \`npm run bench -- workflow-api\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}

${RUNS} instances one after another, each started with \`startWorkflow\` and answered with
\`completeDialog\` over HTTP (GraphQL, a bearer token), the engine in the same process with its
LISTEN/NOTIFY wake-ups. A latency runs from sending the request to the step's \`StepScheduled\`
in the log. The baseline is the round trip of \`{ viewer { id } }\` to the same server.

| measure | p50 (ms) | p99 (ms) | p50 / baseline p50 |
| --- | ---: | ---: | ---: |
| \`startWorkflow\` sent → first step scheduled | ${p(firsts, 50)} | ${p(firsts, 99)} | ${ratio(firsts)} |
| \`completeDialog\` sent → next step scheduled | ${p(nexts, 50)} | ${p(nexts, 99)} | ${ratio(nexts)} |
| baseline: \`{ viewer { id } }\` round trip | ${p(baseline, 50)} | ${p(baseline, 99)} | 1 |
`,
      );
      process.stderr.write(
        `bench: workflow-api: start→first step p50 ${p(firsts, 50)} ms, answer→next step p50 ${p(nexts, 50)} ms (baseline ${p(baseline, 50)} ms)\n`,
      );
    } finally {
      await engine.stop();
    }
  } finally {
    await server.close();
    await jobs.stop();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
