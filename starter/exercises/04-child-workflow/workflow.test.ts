/** Task 4's tests: `npx annal exercise 4` runs them. Leave them as they are. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fixture, workflowTest } from "annal/testing";
import onboarding, { addGroups, type Groups } from "./workflow.ts";

const MEMBER = "uid=ada,ou=engineering,ou=people,dc=example,dc=org";

test("the parent starts the child, which adds the groups, and takes its result", async (t) => {
  const added: string[] = [];
  const groups: Groups = { add: (member, group) => void added.push(`${member} → ${group}`) };
  const wt = await workflowTest({
    // Both definitions: the test registers each workflow the flow starts.
    workflows: [onboarding, addGroups],
    fixtures: [fixture("groups", groups)],
  });
  t.after(() => wt.close());
  const flow = await wt.start({ uid: "ada", department: "engineering" }, { as: "hr" });

  const child = await flow.toHaveChild(addGroups);
  const childDone = await child.waitFor("COMPLETED");
  assert.deepEqual(childDone.parameters, { member: MEMBER, groups: ["engineering", "vpn-users"] });
  assert.deepEqual(childDone.parent?.instanceId, flow.id, "the child knows its parent");

  const done = await flow.waitFor("COMPLETED");
  assert.deepEqual(done.result, {
    uid: "ada",
    member: MEMBER,
    groups: ["engineering", "vpn-users"],
  });
  assert.deepEqual(added, [`${MEMBER} → engineering`, `${MEMBER} → vpn-users`]);
});

test("the parent waits while its child waits", async (t) => {
  let fail = true;
  const groups: Groups = {
    add() {
      if (fail) throw new Error("the directory is busy");
    },
  };
  const wt = await workflowTest({
    workflows: [onboarding, addGroups],
    fixtures: [fixture("groups", groups)],
  });
  t.after(() => wt.close());
  const flow = await wt.start({ uid: "ada", department: "engineering" }, { as: "hr" });
  const child = await flow.toHaveChild(addGroups);
  // The child's first step failed and waits to retry; the parent waits for the child.
  await child.waitFor("WAITING");
  assert.equal((await flow.waitFor("WAITING")).status, "WAITING");
  fail = false;
  await wt.advanceClock("1m");
  assert.equal((await flow.waitFor("COMPLETED")).status, "COMPLETED");
});
