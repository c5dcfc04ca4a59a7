import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import t from "tap";
import { startWorkflow } from "../../src/workflow/index.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";
import { actor, definitionsDir, STEP_COMPLETIONS, workflowFixture } from "../support/workflow.ts";

t.setTimeout(600_000);

const ENGINE_PROCESS = path.resolve(import.meta.dirname, "../support/engine-process.ts");
const INSTANCES = Number(process.env.ANNAL_SOAK_INSTANCES ?? 1000);

/**
 * Five steps, each failing on some attempts (a third of them, decided by a hash of the
 * instance, the step and the attempt, so every process decides alike); an instance whose
 * number is a multiple of 10 fails for good at step 3. What each step returns is a function of
 * the instance's number: the result says whether a step's result was lost or taken twice.
 */
const SOAK = `
import { createHash } from "node:crypto";
import { defineWorkflow, NonRetryableError } from "annal";
import { z } from "zod";
const unlucky = (...parts) => createHash("sha256").update(parts.join(":")).digest()[0] < 85;
export default defineWorkflow({
  name: "soak",
  version: 1,
  parameters: z.object({ n: z.number().int() }),
  async run(flow, { n }) {
    let total = 0;
    for (let step = 1; step <= 5; step++) {
      total += await flow.step("step " + step, ({ attempt }) => {
        if (step === 3 && n % 10 === 0) throw new NonRetryableError("instance " + n + " is refused");
        if (unlucky(flow.instanceId, step, attempt)) throw new Error("unlucky attempt " + attempt);
        return n * step;
      }, { retry: { maxAttempts: 20, initialDelay: "10ms", maxDelay: "100ms" } });
    }
    return total;
  },
});
`;

t.test(
  `a soak of ${INSTANCES} instances with random step failures and killed workers ends as the code implies`,
  async (t) => {
    const dir = definitionsDir(t, { "soak.ts": SOAK });
    const db = await testDatabase(t);
    const processes = new Set<ChildProcess>();
    const spawnEngine = async () => {
      const child = spawn(process.execPath, [ENGINE_PROCESS, db.url, dir], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      processes.add(child);
      child.once("exit", () => processes.delete(child));
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on(
          "data",
          (chunk: Buffer) => chunk.toString().includes("ready") && resolve(),
        );
        child.once("exit", (code) => reject(new Error(`the engine process exited with ${code}`)));
      });
      return child;
    };
    t.teardown(() => {
      for (const child of processes) child.kill("SIGKILL");
    });
    // Every instance is started while no engine runs: with the engines already running, two
    // of them could end all the instances while the test was still starting them, and no
    // worker would be killed while work remained. One engine runs first, for the queues it
    // makes, and is stopped before the first start.
    const first = await spawnEngine();
    const exited = new Promise((resolve) => first.once("exit", resolve));
    first.kill("SIGKILL");
    await exited;
    const f = await workflowFixture(t, { dir, db, startEngine: false });
    const ids: { id: string; n: number }[] = [];
    for (let n = 1; n <= INSTANCES; n++) {
      ids.push({
        id: (await startWorkflow(f, { name: "soak", parameters: { n }, as: actor("soak") }))
          .instanceId,
        n,
      });
    }
    await spawnEngine();
    await spawnEngine();

    // Each time another tenth of the instances has ended, a worker is killed with SIGKILL
    // (mid-step, as likely as not) and another started, until every instance has ended.
    let kills = 0;
    const ended = async () =>
      (
        await f.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM streams AS s
             JOIN events AS e ON e.stream_id = s.stream_id AND e.stream_version = s.version
            WHERE s.stream_id LIKE 'workflow-%' AND e.type IN ('WorkflowCompleted', 'WorkflowErrored')`,
        )
      ).rows[0]!.n;
    for (let count = await ended(); count < INSTANCES;) {
      const target = Math.min(INSTANCES, count + Math.ceil(INSTANCES / 10));
      count = await eventually(
        async () => {
          const now = await ended();
          return now >= target ? now : undefined;
        },
        { timeout: 120_000, what: `${target} instances to end` },
      );
      if (count < INSTANCES) {
        [...processes][0]?.kill("SIGKILL");
        kills++;
        await spawnEngine();
      }
    }
    t.ok(kills > 0, `workers were killed ${kills} times`);

    const results = await f.pool.query<{
      stream_id: string;
      type: string;
      data: { result?: number; error?: { code: string } };
    }>(
      `SELECT s.stream_id, e.type, e.data FROM streams AS s
         JOIN events AS e ON e.stream_id = s.stream_id AND e.stream_version = s.version
        WHERE s.stream_id LIKE 'workflow-%' AND s.stream_id NOT LIKE 'workflow-definition-%'`,
    );
    const byId = new Map(results.rows.map((row) => [row.stream_id.slice(9), row]));
    let wrong = 0;
    for (const { id, n } of ids) {
      const end = byId.get(id);
      const expected =
        n % 10 === 0
          ? end?.type === "WorkflowErrored" && end.data.error?.code === "WF_NON_RETRYABLE"
          : end?.type === "WorkflowCompleted" && end.data.result === n * 15;
      if (!expected) wrong++;
    }
    t.equal(wrong, 0, "every instance ended as its code implies");
    const twice = await f.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (
         SELECT stream_id, seq FROM ${STEP_COMPLETIONS} AS c
          GROUP BY stream_id, seq HAVING count(*) > 1) AS d`,
    );
    t.equal(twice.rows[0]!.n, 0, "no step's result was recorded twice");
    const lost = await f.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM events AS e WHERE e.type = 'WorkflowCompleted'
          AND (SELECT count(*) FROM ${STEP_COMPLETIONS} AS c WHERE c.stream_id = e.stream_id) <> 5`,
    );
    t.equal(lost.rows[0]!.n, 0, "every completed instance has each of its five results once");
  },
);
