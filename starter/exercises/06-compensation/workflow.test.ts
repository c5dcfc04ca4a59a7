/** Task 6's tests: `npx annal exercise 6` runs them. Leave them as they are. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { NonRetryableError } from "annal";
import { fixture, workflowTest } from "annal/testing";
import provision, { type Provisioning } from "./workflow.ts";

/** A mail system and directory that keep what was done; `groups` are the groups that exist. */
async function setup(t: { after(fn: () => unknown): void }, options: { busy?: boolean } = {}) {
  const done: string[] = [];
  const provisioning: Provisioning = {
    createMailbox(uid) {
      done.push(`created ${uid}@example.org`);
      return `${uid}@example.org`;
    },
    deleteMailbox(address) {
      done.push(`deleted ${address}`);
    },
    addToGroup(uid, group) {
      if (options.busy) throw new Error("the directory is busy");
      if (group !== "staff") throw new NonRetryableError(`there is no group ${group}`);
      done.push(`added ${uid} to ${group}`);
    },
  };
  const wt = await workflowTest({
    workflows: [provision],
    fixtures: [fixture("provisioning", provisioning)],
  });
  t.after(() => wt.close());
  return { wt, done };
}

test("when every step works, nothing is undone", async (t) => {
  const { wt, done } = await setup(t);
  const flow = await wt.start({ uid: "ada", group: "staff" }, { as: "hr" });
  const result = (await flow.waitFor("COMPLETED")).result;
  assert.deepEqual(result, { uid: "ada", provisioned: true, mailbox: "ada@example.org" });
  assert.deepEqual(done, ["created ada@example.org", "added ada to staff"]);
});

test("a step that fails for good is compensated: the mailbox is deleted", async (t) => {
  const { wt, done } = await setup(t);
  const flow = await wt.start({ uid: "ada", group: "no-such-group" }, { as: "hr" });
  const finished = await flow.waitFor((state) => state.status !== "RUNNING");
  assert.equal(finished.status, "COMPLETED", "the flow completes, it does not error");
  assert.deepEqual(finished.result, {
    uid: "ada",
    provisioned: false,
    reason: "there is no group no-such-group",
  });
  assert.deepEqual(done, ["created ada@example.org", "deleted ada@example.org"]);
  const steps = [...finished.calls.values()].flatMap((call) =>
    call.kind === "step" ? [`${call.name}: ${call.state}`] : [],
  );
  assert.deepEqual(steps, [
    "create mailbox: completed",
    "add to group: failed",
    "delete mailbox: completed",
  ]);
});

test("a step that fails on every attempt is compensated too", async (t) => {
  const { wt, done } = await setup(t, { busy: true });
  const flow = await wt.start({ uid: "ada", group: "staff" }, { as: "hr" });
  await flow.waitFor("WAITING"); // the first attempt failed; the second comes in a second
  await wt.advanceClock("1m");
  const finished = await flow.waitFor(
    (state) => state.status !== "RUNNING" && state.status !== "WAITING",
  );
  assert.equal(finished.status, "COMPLETED", "the flow completes, it does not error");
  assert.match(String((finished.result as { reason?: unknown }).reason), /the directory is busy/);
  assert.deepEqual(done, ["created ada@example.org", "deleted ada@example.org"]);
});
