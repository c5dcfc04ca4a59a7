import t from "tap";
import { readStream } from "../../src/store/index.ts";
import { advanceDatabaseClock, startWorkflow } from "../../src/workflow/index.ts";
import { backoff } from "../../src/workflow/step.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(180_000);

/** A definition whose steps call the `flaky` service: a fixture each test makes fail as it likes. */
const FLAKY = `
import { bind, defineWorkflow, NonRetryableError } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "flaky",
  version: 1,
  parameters: z.object({ mode: z.string() }),
  bindings: { flaky: bind.service(() => { throw new Error("replaced by a fixture"); }) },
  async run(flow, { mode }) {
    if (mode === "assert") flow.assert(false, "the books do not balance");
    if (mode === "schema") {
      return flow.step("bad result", () => ({ n: "three" }), { schema: z.object({ n: z.number() }) });
    }
    if (mode === "catch") {
      try {
        await flow.step("permanent", ({ bindings }) => bindings.flaky.permanent(), { retry: { maxAttempts: 3, initialDelay: "10ms" } });
      } catch (error) {
        return { caught: error.code, name: error.name };
      }
    }
    const value = await flow.step("call", ({ bindings, attempt }) => bindings.flaky.call(attempt), {
      retry: { maxAttempts: 4, initialDelay: "10ms", maxDelay: "40ms" },
    });
    return { value };
  },
});
`;

function flakyService(failures: number) {
  const calls: number[] = [];
  return {
    calls,
    service: {
      call(attempt: number) {
        calls.push(attempt);
        if (calls.length <= failures) throw new Error(`transient failure ${calls.length}`);
        return `ok after ${calls.length}`;
      },
      permanent() {
        throw Object.assign(new Error("no such employee"), { code: "HR_UNKNOWN" });
      },
    },
  };
}

async function setup(
  t: Parameters<typeof definitionsDir>[0] & { teardown(fn: () => unknown): void },
  failures: number,
) {
  const dir = definitionsDir(t, { "flaky.ts": FLAKY });
  const flaky = flakyService(failures);
  const f = await workflowFixture(t, { dir, bindings: { fixtures: { flaky: flaky.service } } });
  const start = async (mode: string) =>
    (await startWorkflow(f, { name: "flaky", parameters: { mode }, as: actor("alice") }))
      .instanceId;
  return { f, flaky, start };
}

t.test("a failing step is retried with backoff until it succeeds", async (t) => {
  const { f, flaky, start } = await setup(t, 2);
  const id = await start("retry");
  const done = await f.settled(id, "COMPLETED");
  t.same(done.result, { value: "ok after 3" });
  t.same(flaky.calls, [1, 2, 3], "attempts 1, 2, 3");
  const events = await readStream(f.pool, `workflow-${id}`);
  const failed = events.filter((e) => e.type === "StepFailed");
  t.equal(failed.length, 2);
  const scheduled = events.filter((e) => e.type === "StepScheduled");
  t.same(
    scheduled.map((e) => (e.data as { attempt: number }).attempt),
    [1, 2, 3],
  );
  failed.forEach((event, i) => {
    const data = event.data as { retryAt: string; error: { message: string } };
    t.match(data.error.message, /transient failure/);
    t.ok(
      scheduled[i + 1]!.recordedAt.getTime() >= Date.parse(data.retryAt),
      `attempt ${i + 2} ran no earlier than its retryAt`,
    );
  });
});

t.test("backoff doubles from the initial delay, with jitter, up to the maximum", async (t) => {
  const policy = { maxAttempts: 10, initialDelay: "100ms", maxDelay: "1s" };
  for (let i = 0; i < 50; i++) {
    const first = backoff(policy, 1);
    const third = backoff(policy, 3);
    t.ok(first >= 75 && first <= 125, `attempt 1: ${first}`);
    t.ok(third >= 300 && third <= 500, `attempt 3: ${third}`);
    t.ok(backoff(policy, 9) <= 1000, "never past maxDelay");
  }
});

t.test(
  "a step that fails on every attempt ends the instance ERRORED with WF_STEP_FAILED",
  async (t) => {
    const { f, flaky, start } = await setup(t, 100);
    const id = await start("retry");
    const errored = await f.settled(id, "ERRORED");
    t.equal(flaky.calls.length, 4, "maxAttempts");
    t.match(errored.error, {
      code: "WF_STEP_FAILED",
      message: /step "call" failed after 4 attempts: transient failure 4/,
    });
  },
);

t.test("a step's own code survives retries and is given to the code to catch", async (t) => {
  const { f, start } = await setup(t, 0);
  const id = await start("catch");
  const done = await f.settled(id, "COMPLETED");
  t.same(done.result, { caught: "HR_UNKNOWN", name: "Error" });
});

t.test(
  "flow.assert and a result that fails its schema end the instance ERRORED, not retried",
  async (t) => {
    const { f, start } = await setup(t, 0);
    const asserted = await f.settled(await start("assert"), "ERRORED");
    t.match(asserted.error, { code: "WF_ASSERTION", message: "the books do not balance" });
    const invalid = await f.settled(await start("schema"), "ERRORED");
    t.match(invalid.error, { code: "WF_VALIDATION", message: /bad result.*n: /s });
    const step = [...invalid.calls.values()].find((c) => c.kind === "step");
    t.match(step, { state: "failed", attempts: 1 }, "a validation failure is not retried");
  },
);

const NON_RETRYABLE = `
import { defineWorkflow, NonRetryableError } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "permanent",
  version: 1,
  parameters: z.object({}),
  async run(flow) {
    await flow.step("refuse", () => { throw new NonRetryableError("the account is closed"); });
    return "unreachable";
  },
});
`;

t.test("NonRetryableError fails the step at once: WF_NON_RETRYABLE", async (t) => {
  const dir = definitionsDir(t, { "permanent.ts": NON_RETRYABLE });
  const f = await workflowFixture(t, { dir });
  const { instanceId } = await startWorkflow(f, {
    name: "permanent",
    parameters: {},
    as: actor("a"),
  });
  const errored = await f.settled(instanceId, "ERRORED");
  t.match(errored.error, { code: "WF_NON_RETRYABLE", message: "the account is closed" });
  const step = errored.calls.get(1);
  t.match(step, { kind: "step", attempts: 1, state: "failed" });
});

const DETERMINISTIC = `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "values",
  version: 1,
  parameters: z.object({}),
  async run(flow) {
    const first = { now: flow.now().toISOString(), id: flow.uuid(), r: flow.random() };
    // A retry makes the code run again from the start: the values must come back the same.
    await flow.step("flaky", ({ attempt }) => { if (attempt < 2) throw new Error("again"); return attempt; }, {
      retry: { initialDelay: "10ms" },
    });
    const second = { now: flow.now().toISOString(), id: flow.uuid(), r: flow.random() };
    return { first, second };
  },
});
`;

t.test(
  "now, uuid and random are recorded: a replay sees the values the first run saw",
  async (t) => {
    const dir = definitionsDir(t, { "values.ts": DETERMINISTIC });
    const f = await workflowFixture(t, { dir });
    const { instanceId } = await startWorkflow(f, {
      name: "values",
      parameters: {},
      as: actor("a"),
    });
    const done = await f.settled(instanceId, "COMPLETED");
    const events = await readStream(f.pool, `workflow-${instanceId}`);
    const values = events
      .filter((e) => e.type === "FlowValueRecorded")
      .map((e) => (e.data as { value: unknown }).value);
    t.equal(values.length, 6, "each value recorded once, though the code ran twice");
    const result = done.result as {
      first: Record<string, unknown>;
      second: Record<string, unknown>;
    };
    t.same([result.first.now, result.first.id, result.first.r], values.slice(0, 3));
    t.same([result.second.now, result.second.id, result.second.r], values.slice(3));
  },
);

const SLOW_AND_LATE = `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "late",
  version: 1,
  parameters: z.object({ mode: z.string() }),
  until: "1h",
  async run(flow, { mode }) {
    if (mode === "timeout") {
      return flow.step("slow", ({ attempt }) => attempt === 1 ? new Promise(() => {}) : "second try", {
        timeout: "200ms",
        retry: { initialDelay: "10ms" },
      });
    }
    await flow.dialog({ name: "never answered", assignees: ["nobody"], schema: z.object({}) });
    return "answered";
  },
});
`;

t.test("an attempt over its timeout fails with WF_STEP_TIMEOUT and is retried", async (t) => {
  const dir = definitionsDir(t, { "late.ts": SLOW_AND_LATE });
  const f = await workflowFixture(t, { dir });
  const { instanceId } = await startWorkflow(f, {
    name: "late",
    parameters: { mode: "timeout" },
    as: actor("a"),
  });
  const done = await f.settled(instanceId, "COMPLETED");
  t.equal(done.result, "second try");
  const events = await readStream(f.pool, `workflow-${instanceId}`);
  const failed = events.find((e) => e.type === "StepFailed");
  t.match(failed?.data, { attempt: 1, error: { code: "WF_STEP_TIMEOUT" } });
});

t.test("an instance past its own deadline ends ERRORED with WF_TIMEOUT", async (t) => {
  const dir = definitionsDir(t, { "late.ts": SLOW_AND_LATE });
  const f = await workflowFixture(t, { dir });
  const { instanceId } = await startWorkflow(f, {
    name: "late",
    parameters: { mode: "wait" },
    as: actor("a"),
  });
  await f.settled(instanceId, "WAITING");
  await advanceDatabaseClock(f.pool, 3600 * 1000 + 1000);
  await f.engine.fireTimers();
  const errored = await f.settled(instanceId, "ERRORED");
  t.match(errored.error, { code: "WF_TIMEOUT", message: /did not finish by its deadline/ });
  t.ok(errored.deadlinePassed);
});
