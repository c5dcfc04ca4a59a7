import { randomUUID } from "node:crypto";
import t from "tap";
import { workflowsProjection } from "../../projections/index.ts";
import { WORKFLOW_STEPS } from "../../projections/workflows/index.ts";
import { annalEvent } from "../../src/events/index.ts";
import { Projector, replayProjection, waitForProjection } from "../../src/projector/index.ts";
import { readStream } from "../../src/store/index.ts";
import { startWorkflow } from "../../src/workflow/index.ts";
import { testDatabase } from "../support/postgres.ts";
import { actor, definitionsDir, stepCompletions, workflowFixture } from "../support/workflow.ts";

t.setTimeout(180_000);

/** Three steps in a row, the second made for an approver (`as`). */
const CHAIN = `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "chain",
  version: 1,
  parameters: z.object({}),
  async run(flow) {
    const one = await flow.step("one", () => "new1");
    const two = await flow.step("two", () => "new2", {
      as: { accountId: "00000000-0000-4000-8000-00000000a001", name: "ann", dn: "uid=ann,dc=example,dc=org" },
    });
    const three = await flow.step("three", () => "new3");
    return [one, two, three].join("|");
  },
});
`;

const quiet = { info() {}, warn() {}, error() {} };
const ann = {
  accountId: "00000000-0000-4000-8000-00000000a001",
  name: "ann",
  dn: "uid=ann,dc=example,dc=org",
};

t.test(
  "a step is one event: the completion of the step before rides with its StepScheduled",
  async (t) => {
    const dir = definitionsDir(t, { "chain.ts": CHAIN });
    const f = await workflowFixture(t, { dir });
    const { instanceId } = await startWorkflow(f, {
      name: "chain",
      parameters: {},
      as: actor("a"),
    });
    const done = await f.settled(instanceId, "COMPLETED");
    t.equal(done.result, "new1|new2|new3");
    const events = await readStream(f.pool, `workflow-${instanceId}`);
    t.same(
      events.map((e) => e.type),
      [
        "WorkflowStarted",
        "StepScheduled",
        "StepScheduled",
        "StepScheduled",
        "StepCompleted",
        "WorkflowCompleted",
      ],
      "one event a step; the last step's completion has no next step to ride with",
    );
    t.same(stepCompletions(events), [
      { seq: 1, result: "new1" },
      { seq: 2, result: "new2" },
      { seq: 3, result: "new3" },
    ]);
    const scheduled = events.filter((e) => e.type === "StepScheduled");
    t.same(
      scheduled.map((e) => e.data),
      [
        { instanceId, workflow: "chain", seq: 1, name: "one", attempt: 1 },
        {
          instanceId,
          workflow: "chain",
          seq: 2,
          name: "two",
          attempt: 1,
          actingFor: ann,
          completed: { seq: 1, result: "new1" },
        },
        {
          instanceId,
          workflow: "chain",
          seq: 3,
          name: "three",
          attempt: 1,
          completed: { seq: 2, result: "new2" },
        },
      ],
      "no nulls: a step acting for no one says nothing of it",
    );
    t.match(
      [...done.calls.values()],
      [
        { seq: 1, kind: "step", state: "completed", result: "new1", actingFor: null },
        { seq: 2, kind: "step", state: "completed", result: "new2", actingFor: ann },
        { seq: 3, kind: "step", state: "completed", result: "new3", actingFor: null },
      ],
    );
  },
);

t.test(
  "a log of the old shape (a StepCompleted a step, actingFor null) resumes, and the projection reads both shapes",
  async (t) => {
    const dir = definitionsDir(t, { "chain.ts": CHAIN });
    const db = await testDatabase(t);
    // Written as the engine wrote an instance's steps before, while no engine runs: the
    // engine started next finds it (its start's sweep) and goes on from the third step.
    const old = await workflowFixture(t, { dir, db, startEngine: false });
    const chain = (await old.definitions.version("chain", 1))!;
    const oldId = randomUUID();
    const step = (seq: number, name: string, actingFor: typeof ann | null) =>
      annalEvent("StepScheduled", {
        instanceId: oldId,
        workflow: "chain",
        seq,
        name,
        attempt: 1,
        actingFor,
      });
    await old.store.appendToStream(
      `workflow-${oldId}`,
      [
        annalEvent("WorkflowStarted", {
          instanceId: oldId,
          definition: { name: "chain", version: 1, hash: chain.hash },
          parameters: {},
          startedBy: { accountId: actor("a").accountId, name: "a", dn: null },
          until: null,
          parent: null,
          startKey: null,
        }),
        step(1, "one", null),
        annalEvent("StepCompleted", { seq: 1, name: "one", attempt: 1, result: "old1" }),
        step(2, "two", ann),
        annalEvent("StepCompleted", { seq: 2, name: "two", attempt: 1, result: "old2" }),
      ],
      { expectedVersion: "no_stream" },
    );

    const f = await workflowFixture(t, { dir, db });
    const done = await f.settled(oldId, "COMPLETED");
    t.equal(
      done.result,
      "old1|old2|new3",
      "the recorded results stand: steps 1 and 2 did not run again",
    );
    t.match(
      [...done.calls.values()],
      [
        { seq: 1, state: "completed", result: "old1", actingFor: null },
        { seq: 2, state: "completed", result: "old2", actingFor: ann },
        { seq: 3, state: "completed", result: "new3", actingFor: null },
      ],
    );
    const { instanceId: newId } = await startWorkflow(f, {
      name: "chain",
      parameters: {},
      as: actor("a"),
    });
    await f.settled(newId, "COMPLETED");

    const projector = await Projector.start({
      pool: f.pool,
      projections: [workflowsProjection],
      log: quiet,
      pollInterval: 50,
    });
    t.teardown(() => projector.stop());
    await waitForProjection(f.pool, "workflows", await f.store.head());
    const steps = async () =>
      (
        await f.pool.query<{
          instance_id: string;
          seq: number;
          state: string;
          result: unknown;
          ended: boolean;
        }>(
          `SELECT instance_id, seq, name, state, attempts, result, ended_at IS NOT NULL AS ended
             FROM ${WORKFLOW_STEPS} ORDER BY instance_id, seq`,
        )
      ).rows;
    const incremental = await steps();
    const of = (id: string) =>
      incremental.filter((row) => row.instance_id === id).map(({ instance_id: _, ...row }) => row);
    const expected = (first: string, second: string) => [
      { seq: 1, name: "one", state: "completed", attempts: 1, result: first, ended: true },
      { seq: 2, name: "two", state: "completed", attempts: 1, result: second, ended: true },
      { seq: 3, name: "three", state: "completed", attempts: 1, result: "new3", ended: true },
    ];
    t.same(of(oldId), expected("old1", "old2"), "the old shape's steps");
    t.same(of(newId), expected("new1", "new2"), "the new shape's steps, the same rows");

    await projector.stop();
    await replayProjection({ pool: f.pool, projection: workflowsProjection });
    t.same(await steps(), incremental, "a replay of the log gives the tables incremental gave");
  },
);

/** A step that returns nothing, then two more: its result is read back from the log in a replay. */
const NOTHING = `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "nothing",
  version: 1,
  parameters: z.object({}),
  async run(flow) {
    const first = await flow.step("void", () => {});
    const second = await flow.step("two", () => 2);
    return await flow.step("three", () => ({ first, second }));
  },
});
`;

t.test(
  "a step that returned nothing says only its seq, and a replay reads it as the null the code saw",
  async (t) => {
    const dir = definitionsDir(t, { "nothing.ts": NOTHING });
    // Two steps an advance, no parked runs: the third step comes after a wake that replays
    // the first two from the log.
    const f = await workflowFixture(t, { dir, stepsPerAdvance: 2, stickyRuns: 0 });
    const { instanceId } = await startWorkflow(f, {
      name: "nothing",
      parameters: {},
      as: actor("a"),
    });
    const done = await f.settled(instanceId, "COMPLETED");
    t.same(done.result, { first: null, second: 2 });
    const events = await readStream(f.pool, `workflow-${instanceId}`);
    const second = events.find(
      (e) => e.type === "StepScheduled" && (e.data as { seq: number }).seq === 2,
    );
    t.same((second?.data as { completed?: unknown }).completed, { seq: 1 }, "no null result");
    t.match(done.calls.get(1), { kind: "step", state: "completed", result: null });
    t.same(
      stepCompletions(events).map((c) => c.result),
      [null, 2, { first: null, second: 2 }],
    );
  },
);

t.test(
  "the projection updates the step a later batch's StepScheduled completes, in a batch of its own",
  async (t) => {
    const dir = definitionsDir(t, { "chain.ts": CHAIN });
    const f = await workflowFixture(t, { dir, startEngine: false });
    const chain = (await f.definitions.version("chain", 1))!;
    const id = randomUUID();
    const stream = `workflow-${id}`;
    const projector = await Projector.start({
      pool: f.pool,
      projections: [workflowsProjection],
      log: quiet,
      pollInterval: 50,
    });
    t.teardown(() => projector.stop());
    const stepRows = async () =>
      (
        await f.pool.query<{ seq: number; state: string; result: unknown }>(
          `SELECT seq, state, result FROM ${WORKFLOW_STEPS} WHERE instance_id = $1 ORDER BY seq`,
          [id],
        )
      ).rows;
    const scheduled = (seq: number, name: string, completed?: { seq: number; result: unknown }) =>
      annalEvent("StepScheduled", {
        instanceId: id,
        workflow: "chain",
        seq,
        name,
        attempt: 1,
        ...(completed ? { completed } : {}),
      });
    await f.store.appendToStream(
      stream,
      [
        annalEvent("WorkflowStarted", {
          instanceId: id,
          definition: { name: "chain", version: 1, hash: chain.hash },
          parameters: {},
          startedBy: { accountId: actor("a").accountId, name: "a", dn: null },
          until: null,
          parent: null,
          startKey: null,
        }),
        scheduled(1, "one"),
      ],
      { expectedVersion: "no_stream" },
    );
    await waitForProjection(f.pool, "workflows", await f.store.head());
    t.same(await stepRows(), [{ seq: 1, state: "scheduled", result: null }]);
    await f.store.appendToStream(stream, [scheduled(2, "two", { seq: 1, result: "r1" })], {
      expectedVersion: 2,
    });
    await waitForProjection(f.pool, "workflows", await f.store.head());
    t.same(
      await stepRows(),
      [
        { seq: 1, state: "completed", result: "r1" },
        { seq: 2, state: "scheduled", result: null },
      ],
      "step 1's row is completed by the event that schedules step 2",
    );
  },
);
