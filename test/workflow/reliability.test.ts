import { spawn } from "node:child_process";
import path from "node:path";
import t from "tap";
import { readStream } from "../../src/store/index.ts";
import { startWorkflow } from "../../src/workflow/index.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";
import { actor, definitionsDir, stepCompletions, workflowFixture } from "../support/workflow.ts";

t.setTimeout(300_000);

const ENGINE_PROCESS = path.resolve(import.meta.dirname, "../support/engine-process.ts");

/** Its first attempt never ends (the process running it is killed); a later one does. */
const SLOW = `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "slow",
  version: 1,
  parameters: z.object({}),
  async run(flow) {
    const before = await flow.step("before", () => "b");
    const middle = await flow.step("middle", async ({ attempt }) => {
      if (attempt === 1) await new Promise(() => {});
      return "m" + attempt;
    }, { timeout: "1h" });
    const after = await flow.step("after", () => "a");
    return [before, middle, after].join("");
  },
});
`;

t.test(
  "a worker killed with SIGKILL mid-step leaves the step to run again; the instance completes",
  async (t) => {
    const dir = definitionsDir(t, { "slow.ts": SLOW });
    const db = await testDatabase(t);
    const child = spawn(process.execPath, [ENGINE_PROCESS, db.url, dir], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    t.teardown(() => child.kill("SIGKILL"));
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    await eventually(() => stdout.includes("ready"), { what: "the engine process is ready" });

    // Started while only the other process runs an engine: it takes the step.
    const f = await workflowFixture(t, { dir, db, startEngine: false });
    const { instanceId } = await startWorkflow(f, { name: "slow", parameters: {}, as: actor("a") });
    await eventually(
      async () => {
        const events = await readStream(f.pool, `workflow-${instanceId}`);
        return events.some(
          (e) => e.type === "StepScheduled" && (e.data as { name: string }).name === "middle",
        );
      },
      { what: "the killed process's attempt of the middle step began" },
    );
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));

    // An engine starting afterwards finds the instance left mid-step and goes on.
    const g = await workflowFixture(t, { dir, db });
    const done = await g.settled(instanceId, "COMPLETED");
    t.equal(done.result, "bm2a");
    const events = await readStream(g.pool, `workflow-${instanceId}`);
    const attempts = (type: string, name: string) =>
      events
        .filter((e) => e.type === type && (e.data as { name: string }).name === name)
        .map((e) => (e.data as { attempt: number }).attempt);
    t.same(attempts("StepScheduled", "middle"), [1, 2], "the lost attempt is run again");
    t.same(
      attempts("StepScheduled", "before"),
      [1],
      "a step done before the kill is not run again",
    );
    t.same(
      stepCompletions(events),
      [
        { seq: 1, result: "b" },
        { seq: 2, result: "m2" },
        { seq: 3, result: "a" },
      ],
      "each step completed once, the middle one by its second attempt",
    );
  },
);
