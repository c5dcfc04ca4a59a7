/**
 * The workflow test driver under node:test, the runner Node.js has built in:
 *
 *   node --test examples/testing/greet.node-test.ts
 *
 * Without DATABASE_URL the driver starts an embedded PostgreSQL of this process's own;
 * with it, each test gets a database of its own on that server.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { z } from "zod";
import { defineWorkflow } from "annal";
import { fixture, workflowTest } from "annal/testing";

const greet = defineWorkflow({
  name: "greet",
  version: 1,
  parameters: z.object({ who: z.string() }),
  bindings: {},
  async run(flow, { who }) {
    const { answer } = await flow.dialog({
      name: "wording",
      assignees: ["writers"],
      schema: z.object({ word: z.string() }),
      until: "1d",
    });
    return `${answer.word}, ${who}`;
  },
});

test("node:test drives a workflow through its dialog", async (t) => {
  const wt = await workflowTest({
    workflows: [greet],
    accounts: { wendy: { principals: ["writers"] } },
    fixtures: [fixture("unused", null)],
  });
  t.after(() => wt.close());
  const flow = await wt.start({ who: "Ada" }, { as: "wendy" });
  await flow.completeActivity("wording", { word: "Hello" }, { as: "wendy" });
  assert.equal((await flow.waitFor("COMPLETED")).result, "Hello, Ada");
});

test("node:test sees the driver's codes", async (t) => {
  const wt = await workflowTest({ workflows: [greet] });
  t.after(() => wt.close());
  const flow = await wt.start({ who: "Bob" }, { as: "nobody" });
  await assert.rejects(flow.completeActivity("wording", { word: "Hi" }, { as: "nobody" }), {
    code: "WF_TEST_MUTATION_REJECTED",
  });
  await wt.advanceClock("2d");
  await assert.rejects(flow.waitFor("COMPLETED"), { code: "WF_TEST_INSTANCE_ERRORED" });
});
