import { rmSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { createToken } from "../../src/auth/index.ts";
import { startAccountsAnnal } from "../support/accounts.ts";
import { eventually } from "../support/eventually.ts";
import { STEP_COMPLETIONS, writeDefinition } from "../support/workflow.ts";

t.setTimeout(600_000);

const REPO = path.resolve(import.meta.dirname, "../..");
const INSTANCES = 500;
const STEPS = ["one", "two", "three"];

/**
 * Three trivial steps; each run of a step's body counts itself in a tally this process keeps
 * (definitions are bundled and run in annal's own process), so a step run twice shows even
 * when its second result is never recorded.
 */
const COUNTED = `
import { defineWorkflow } from "annal";
import { z } from "zod";

const runs = (globalThis.__annalStepRuns ??= new Map());

export default defineWorkflow({
  name: "counted",
  version: 1,
  parameters: z.object({ n: z.number().int() }),
  async run(flow, { n }) {
    let total = 0;
    for (const name of ${JSON.stringify(STEPS)}) {
      total += await flow.step(name, async () => {
        const key = flow.instanceId + " " + name;
        runs.set(key, (runs.get(key) ?? 0) + 1);
        return n;
      });
    }
    return total;
  },
});
`;

t.test(
  `${INSTANCES} startWorkflow calls at once over GraphQL, with the default pool and concurrency, all complete, each step run once`,
  async (t) => {
    const runs = new Map<string, number>();
    (globalThis as { __annalStepRuns?: Map<string, number> }).__annalStepRuns = runs;
    const dir = path.join(REPO, ".tap/fixtures", `many-starts-${process.pid}`);
    writeDefinition(dir, "counted.ts", COUNTED);
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    // No [database] poolSize and no [workflows] concurrency: the defaults (10 and 8).
    const app = await startAccountsAnnal(t, {
      extraToml: `[workflows]\ndir = "${dir}"\n`,
    });
    t.equal(app.config.database.poolSize, 10, "the default pool");
    t.equal(app.config.workflows?.concurrency, 8, "the default concurrency");
    const { token } = await createToken(app.db.pool, app.store, { name: "starter", access: [] });

    // Every request is bounded, so a hung annal fails the test instead of hanging it.
    const start = async (n: number) => {
      const response = await fetch(`${app.url}/graphql`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          origin: app.url,
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({
          query: `mutation($p: JSON!) { startWorkflow(name: "counted", parameters: $p) { id } }`,
          variables: { p: { n } },
        }),
        signal: AbortSignal.timeout(120_000),
      });
      const body = (await response.json()) as {
        data?: { startWorkflow: { id: string } };
        errors?: unknown[];
      };
      if (!body.data?.startWorkflow) {
        throw new Error(`start ${n}: ${response.status} ${JSON.stringify(body.errors)}`);
      }
      return body.data.startWorkflow.id;
    };
    const ids = await Promise.all(Array.from({ length: INSTANCES }, (_, n) => start(n)));
    t.equal(new Set(ids).size, INSTANCES, "every start made an instance of its own");

    const completed = async () => {
      const found = await app.db.pool.query<{ count: number }>(
        `SELECT count(*)::int AS count FROM events
          WHERE type = 'WorkflowCompleted' AND stream_id = ANY($1::text[])`,
        [ids.map((id) => `workflow-${id}`)],
      );
      return found.rows[0]!.count;
    };
    await eventually(async () => (await completed()) === INSTANCES, {
      timeout: 300_000,
      interval: 500,
      what: `all ${INSTANCES} instances to complete`,
    }).catch(async (error: unknown) => {
      t.fail(`${await completed()} of ${INSTANCES} completed`);
      throw error;
    });

    const expected = new Map(ids.flatMap((id) => STEPS.map((step) => [`${id} ${step}`, 1])));
    t.same(
      [...runs].filter(([key, count]) => expected.get(key) !== count),
      [],
      "each step of each instance ran exactly once",
    );
    t.equal(runs.size, INSTANCES * STEPS.length, "and every step ran");
    const recorded = await app.db.pool.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM ${STEP_COMPLETIONS} AS c
        WHERE stream_id = ANY($1::text[])`,
      [ids.map((id) => `workflow-${id}`)],
    );
    t.equal(recorded.rows[0]!.count, INSTANCES * STEPS.length, "one completion a step");
  },
);
