/** Task 1's tests: `npx annal exercise 1` runs them. Leave them as they are. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fixture, workflowTest, type InstanceState } from "annal/testing";
import firstStep, { type Accounts } from "./workflow.ts";

/** An account system that fails `failures` times before it works, counting the calls. */
function flakyAccounts(failures: number) {
  const calls: string[] = [];
  const accounts: Accounts = {
    create(uid) {
      calls.push(uid);
      if (calls.length <= failures) throw new Error("the account system is busy");
      return `account-${uid}`;
    },
  };
  return { calls, fixture: fixture("accounts", accounts) };
}

/**
 * The instance has done what it can for now: it ended, or it waits to retry after `attempts`
 * attempts of its step.
 */
function settled(attempts: number) {
  return (state: InstanceState) => {
    const step = [...state.calls.values()].find((call) => call.kind === "step");
    const tried = step?.kind === "step" ? step.attempts : 0;
    return (
      state.status === "COMPLETED" ||
      state.status === "ERRORED" ||
      (state.status === "WAITING" && tried >= attempts)
    );
  };
}

test("the account is created in a step named 'create account'", async (t) => {
  const accounts = flakyAccounts(0);
  const wt = await workflowTest({ workflows: [firstStep], fixtures: [accounts.fixture] });
  t.after(() => wt.close());
  const flow = await wt.start({ uid: "ada" }, { as: "hr" });
  const done = await flow.waitFor("COMPLETED");
  assert.deepEqual(done.result, { uid: "ada", account: "account-ada" });
  const steps = [...done.calls.values()].filter((call) => call.kind === "step");
  assert.deepEqual(
    steps.map((step) => step.name),
    ["create account"],
  );
  assert.deepEqual(accounts.calls, ["ada"]);
});

test("a failed attempt is tried again after the retry's delay", async (t) => {
  const accounts = flakyAccounts(1);
  const wt = await workflowTest({ workflows: [firstStep], fixtures: [accounts.fixture] });
  t.after(() => wt.close());
  const flow = await wt.start({ uid: "ada" }, { as: "hr" });
  // The first attempt fails: the instance waits for the second.
  const waiting = await flow.waitFor(settled(1));
  assert.equal(waiting.status, "WAITING", "after a failed attempt the instance waits to retry");
  await wt.advanceClock("2s"); // 1 second, give or take a quarter
  const done = await flow.waitFor("COMPLETED");
  assert.deepEqual(done.result, { uid: "ada", account: "account-ada" });
  assert.deepEqual(accounts.calls, ["ada", "ada"]);
});

test("after 3 failed attempts the step gives up and the instance errors", async (t) => {
  const accounts = flakyAccounts(Infinity);
  const wt = await workflowTest({ workflows: [firstStep], fixtures: [accounts.fixture] });
  t.after(() => wt.close());
  const flow = await wt.start({ uid: "ada" }, { as: "hr" });
  for (let attempt = 1; attempt < 3; attempt++) {
    assert.equal((await flow.waitFor(settled(attempt))).status, "WAITING");
    await wt.advanceClock("1m");
  }
  const errored = await flow.waitFor(settled(3));
  assert.equal(errored.status, "ERRORED");
  assert.equal(errored.error?.code, "WF_STEP_FAILED");
  assert.equal(accounts.calls.length, 3);
});
