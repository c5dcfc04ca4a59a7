/** Task 2's tests: `npx annal exercise 2` runs them. Leave them as they are. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { workflowTest, type InstanceState } from "annal/testing";
import approval from "./workflow.ts";

const OWNER = "uid=olga,ou=people,dc=example,dc=org";
const MANAGER = "uid=max,ou=people,dc=example,dc=org";
const REQUEST = { group: "on-call", reason: "I cover the rota", owner: OWNER, manager: MANAGER };

/** A refusal of the engine's, as the test driver reports it: its WF_* code is the cause. */
function refusedWith(code: string) {
  return (error: { code?: unknown; cause?: { code?: unknown } }) => {
    assert.equal(error.code, "WF_TEST_MUTATION_REJECTED");
    assert.equal(error.cause?.code, code);
    return true;
  };
}

/** The escalation's first level has come. */
function escalated(state: InstanceState): boolean {
  return [...state.calls.values()].some(
    (call) => call.kind === "dialog" && (call.escalation?.reached ?? 0) >= 1,
  );
}

async function setup(t: { after(fn: () => unknown): void }) {
  const wt = await workflowTest({ workflows: [approval] });
  t.after(() => wt.close());
  return { wt, flow: await wt.start(REQUEST, { as: "rita" }) };
}

test("the owner's answer must match the schema", async (t) => {
  const { flow } = await setup(t);
  await assert.rejects(
    flow.completeActivity("approve", { approved: "yes" }, { as: "olga" }),
    refusedWith("WF_VALIDATION"),
  );
  await flow.completeActivity("approve", { approved: false, comment: "not now" }, { as: "olga" });
  assert.deepEqual((await flow.waitFor("COMPLETED")).result, { approved: false, by: "olga" });
});

test("after 2 days without an answer, the manager may answer too", async (t) => {
  const { wt, flow } = await setup(t);
  await flow.waitFor("WAITING");
  await assert.rejects(
    flow.completeActivity("approve", { approved: true }, { as: "max" }),
    refusedWith("WF_NOT_FOUND"), // not yet theirs to see
  );
  await wt.advanceClock("2d");
  await flow.waitFor(escalated); // the dialog's state records whom the level added
  await flow.completeActivity("approve", { approved: true }, { as: "max" });
  assert.deepEqual((await flow.waitFor("COMPLETED")).result, { approved: true, by: "max" });
});

test("after 3 days without an answer, the request is refused", async (t) => {
  const { wt, flow } = await setup(t);
  await flow.waitFor("WAITING");
  await wt.advanceClock("2d");
  await flow.waitFor(escalated);
  await wt.advanceClock("1d");
  const done = await flow.waitFor((state) => state.status !== "WAITING");
  assert.equal(done.status, "COMPLETED");
  assert.equal((done.result as { approved?: unknown }).approved, false);
});
