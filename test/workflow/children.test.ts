import t from "tap";
import {
  advanceDatabaseClock,
  answerRequest,
  cancelInstance,
  completeDialog,
  dialogIdOf,
  startWorkflow,
} from "../../src/workflow/index.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(180_000);

const PARENT = `
import { defineWorkflow, TimeoutError } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "parent",
  version: 1,
  parameters: z.object({ items: z.array(z.string()), until: z.string().optional() }),
  until: "10d",
  async run(flow, { items, until }) {
    const results = [];
    for (const item of items) {
      try {
        results.push(await flow.start("child", 1, { item }, until ? { until } : {}));
      } catch (error) {
        if (!(error instanceof TimeoutError)) throw error;
        results.push("timed out");
      }
    }
    return results;
  },
});
`;

const CHILD = `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "child",
  version: 1,
  parameters: z.object({ item: z.string() }),
  until: "30d",
  async run(flow, { item }) {
    if (item === "wait") {
      await flow.dialog({ name: "confirm", assignees: ["anyone"], schema: z.object({}) });
    }
    return await flow.step("shout", () => item.toUpperCase());
  },
});
`;

const someone = actor("pat");

t.test("a child runs to its result, which the parent takes", async (t) => {
  const dir = definitionsDir(t, { "parent.ts": PARENT, "child.ts": CHILD });
  const f = await workflowFixture(t, { dir });
  const { instanceId } = await startWorkflow(f, {
    name: "parent",
    parameters: { items: ["a", "b"] },
    as: someone,
  });
  const done = await f.settled(instanceId, "COMPLETED");
  t.same(done.result, ["A", "B"]);
  const children = [...done.calls.values()].filter((c) => c.kind === "child");
  t.equal(children.length, 2);
  for (const call of children) {
    if (call.kind !== "child") continue;
    const child = await f.state(call.childId);
    t.equal(child.status, "COMPLETED");
    t.same(child.parent, { instanceId, seq: call.seq });
    t.ok(
      Date.parse(child.until!) <= Date.parse(done.until!),
      "a child's deadline never exceeds its parent's (30d capped at 10d)",
    );
  }
});

t.test("cancelling a parent cancels its running children", async (t) => {
  const dir = definitionsDir(t, { "parent.ts": PARENT, "child.ts": CHILD });
  const f = await workflowFixture(t, { dir });
  const { instanceId } = await startWorkflow(f, {
    name: "parent",
    parameters: { items: ["wait"] },
    as: someone,
  });
  const waiting = await f.settled(instanceId, "WAITING");
  const call = waiting.calls.get(1);
  if (call?.kind !== "child") throw new Error("no child");
  await f.settled(call.childId, "WAITING");
  await cancelInstance(f, { instanceId, as: someone });
  await f.settled(instanceId, "CANCELLED");
  const child = await f.settled(call.childId, "CANCELLED");
  t.match(child.calls.get(1), { kind: "dialog", state: "cancelled" });
});

t.test(
  "a child's own deadline for the parent: WF_TIMEOUT in the parent, the child cancelled",
  async (t) => {
    const dir = definitionsDir(t, { "parent.ts": PARENT, "child.ts": CHILD });
    const f = await workflowFixture(t, { dir });
    const { instanceId } = await startWorkflow(f, {
      name: "parent",
      parameters: { items: ["wait", "b"], until: "1h" },
      as: someone,
    });
    const waiting = await f.settled(instanceId, "WAITING");
    const call = waiting.calls.get(1);
    if (call?.kind !== "child") throw new Error("no child");
    await advanceDatabaseClock(f.pool, 2 * 3600 * 1000);
    await f.engine.fireTimers();
    const done = await f.settled(instanceId, "COMPLETED");
    t.same(done.result, ["timed out", "B"]);
    await f.settled(call.childId, "CANCELLED");
  },
);

const TICKETS = `
import { bind, defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "laptop",
  version: 1,
  parameters: z.object({ who: z.string() }),
  bindings: { tickets: bind.service(() => ({ send() { throw new Error("replaced"); } })) },
  async run(flow, { who }) {
    const ticket = await flow.request("tickets", { item: "laptop", for: who }, {
      until: "10d",
      schema: z.object({ serial: z.string() }),
    });
    return ticket.serial;
  },
});
`;

t.test(
  "a request is sent through its binding once and waits for an answer by its key",
  async (t) => {
    const dir = definitionsDir(t, { "laptop.ts": TICKETS });
    const sent: { payload: unknown; key: string }[] = [];
    const tickets = {
      send(payload: unknown, request: { key: string }) {
        sent.push({ payload, key: request.key });
        return { ticket: `T-${sent.length}` };
      },
    };
    const f = await workflowFixture(t, { dir, bindings: { fixtures: { tickets } } });
    const { instanceId } = await startWorkflow(f, {
      name: "laptop",
      parameters: { who: "pat" },
      as: someone,
    });
    const waiting = await f.settled(instanceId, "WAITING");
    t.equal(sent.length, 1);
    t.same(sent[0]!.payload, { item: "laptop", for: "pat" });
    t.match(waiting.calls.get(2), { kind: "request", key: sent[0]!.key, state: "pending" });
    await t.rejects(answerRequest(f, { key: sent[0]!.key, answer: { serial: 42 } }), {
      code: "WF_VALIDATION",
    });
    const first = await answerRequest(f, {
      key: sent[0]!.key,
      answer: { serial: "SN-1" },
      source: "itsm",
    });
    t.same(first, { instanceId, recorded: true });
    const again = await answerRequest(f, { key: sent[0]!.key, answer: { serial: "SN-1" } });
    t.same(again, { instanceId, recorded: false }, "the same answer again changes nothing");
    await t.rejects(answerRequest(f, { key: sent[0]!.key, answer: { serial: "SN-2" } }), {
      code: "WF_CONFLICT",
    });
    t.equal((await f.settled(instanceId, "COMPLETED")).result, "SN-1");
    t.equal(sent.length, 1, "sent once");
  },
);

const MISMATCH_V1 = (steps: string[]) => `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "drift",
  version: 1,
  parameters: z.object({}),
  async run(flow) {
${steps.map((s) => `    await flow.step(${JSON.stringify(s)}, () => ${JSON.stringify(s)});`).join("\n")}
    await flow.dialog({ name: "hold", assignees: ["x"], schema: z.object({}) });
    return "done";
  },
});
`;

t.test(
  "code that no longer makes the recorded calls ends ERRORED with WF_REPLAY_MISMATCH",
  async (t) => {
    const dir = definitionsDir(t, { "drift.ts": MISMATCH_V1(["one", "two"]) });
    const f = await workflowFixture(t, { dir });
    const { instanceId } = await startWorkflow(f, { name: "drift", parameters: {}, as: someone });
    const waiting = await f.settled(instanceId, "WAITING");
    // Change the stored bundle's code behind the engine's back, as a bad deploy would if the
    // hash check did not exist: the replay must refuse, not take another branch.
    const bundle = await f.pool.query<{ bundle: string }>(
      "SELECT bundle FROM workflow_bundles WHERE hash = $1",
      [waiting.definition.hash],
    );
    await f.pool.query("UPDATE workflow_bundles SET bundle = $2 WHERE hash = $1", [
      waiting.definition.hash,
      bundle.rows[0]!.bundle.replace('"two"', '"zwei"').replace('"two"', '"zwei"'),
    ]);
    // A fresh engine loads the bundle from the database, as one started after a deploy would.
    const g = await f.redeploy(definitionsDir(t, {}));
    await completeDialog(g, {
      dialogId: dialogIdOf(instanceId, 3),
      answer: {},
      as: actor("xavier", { principals: ["x"] }),
    });
    const errored = await g.settled(instanceId, "ERRORED");
    t.match(errored.error, {
      code: "WF_REPLAY_MISMATCH",
      message: 'call 2: the recorded history has step "two", the code now makes step "zwei"',
    });
    t.equal(errored.erroredAt, 2);
  },
);
