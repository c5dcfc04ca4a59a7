/** Task 3's tests: `npx annal exercise 3` runs them. Leave them as they are. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fixture, workflowTest, type InstanceState } from "annal/testing";
import laptop from "./workflow.ts";

/** A ticket system that keeps what it was sent, with the key its answer comes back with. */
async function setup(t: { after(fn: () => unknown): void }) {
  const sent: { payload: unknown; key: string }[] = [];
  const tickets = fixture("tickets", {
    send(payload: unknown, request: { key: string }) {
      sent.push({ payload, key: request.key });
      return "queued";
    },
  });
  const wt = await workflowTest({ workflows: [laptop], fixtures: [tickets] });
  t.after(() => wt.close());
  return { wt, sent, flow: await wt.start({ uid: "ada" }, { as: "hr" }) };
}

/** The instance waits for the ticket system, or has ended. */
function requestPendingOrOver(state: InstanceState) {
  return (
    state.status === "COMPLETED" ||
    [...state.calls.values()].some((call) => call.kind === "request" && call.state === "pending")
  );
}

test("a laptop is asked for once, and the ticket system's answer completes the flow", async (t) => {
  const { flow, sent } = await setup(t);
  const waiting = await flow.waitFor(requestPendingOrOver);
  assert.equal(waiting.status, "WAITING", "the flow waits for the ticket system");
  assert.deepEqual(
    sent.map((each) => each.payload),
    [{ type: "laptop", for: "ada" }],
  );
  // What a change event from the ticket system does: answer the request by its key.
  await flow.answerRequest("tickets", { status: "done", asset: "LT-0042" });
  const done = await flow.waitFor("COMPLETED");
  assert.deepEqual(done.result, { uid: "ada", laptop: { status: "done", asset: "LT-0042" } });
});

test("an answer the schema refuses is not taken", async (t) => {
  const { flow } = await setup(t);
  await assert.rejects(
    flow.answerRequest("tickets", { status: "lost" }),
    (error: { code?: unknown; cause?: { code?: unknown } }) => {
      assert.equal(error.code, "WF_TEST_MUTATION_REJECTED");
      assert.equal(error.cause?.code, "WF_VALIDATION");
      return true;
    },
  );
});

test("no answer in 14 days: the flow completes without a laptop", async (t) => {
  const { wt, flow } = await setup(t);
  assert.equal((await flow.waitFor(requestPendingOrOver)).status, "WAITING");
  await wt.advanceClock("13d");
  assert.equal((await flow.state()).status, "WAITING", "13 days are not 14");
  await wt.advanceClock("1d");
  assert.deepEqual((await flow.waitFor("COMPLETED")).result, { uid: "ada", laptop: null });
});
