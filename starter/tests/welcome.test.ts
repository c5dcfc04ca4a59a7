/**
 * The example workflow's tests, run by `npm test` (`annal test`): each test gets a
 * PostgreSQL database of its own and a clock it moves; fixtures replace the bindings.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { fixture, workflowTest } from "annal/testing";
import welcome, { type Mailer } from "../workflows/welcome.ts";

const accounts = { hr: { access: [] }, maria: {} };

function recordingMailer(sent: string[]) {
  return fixture("mailer", {
    send: (to: string, text: string) => {
      sent.push(`${to}: ${text}`);
      return "sent";
    },
  } satisfies Mailer);
}

test("the manager confirms the start date", async (t) => {
  const sent: string[] = [];
  const wt = await workflowTest({
    workflows: [welcome],
    accounts,
    fixtures: [recordingMailer(sent)],
  });
  t.after(() => wt.close());
  const flow = await wt.start({ uid: "ada", manager: "maria" }, { as: "hr" });
  await flow.completeActivity("confirm-start", { startsOn: "2027-01-04" }, { as: "maria" });
  const done = await flow.waitFor("COMPLETED");
  assert.deepEqual(done.result, { uid: "ada", startsOn: "2027-01-04", confirmedBy: "maria" });
  assert.deepEqual(sent, ["ada: Welcome!"]);
});

test("a reminder goes out when the manager does not answer in 3 days", async (t) => {
  const sent: string[] = [];
  const wt = await workflowTest({
    workflows: [welcome],
    accounts,
    fixtures: [recordingMailer(sent)],
  });
  t.after(() => wt.close());
  const flow = await wt.start({ uid: "ada", manager: "maria" }, { as: "hr" });
  await flow.waitFor("WAITING");
  await wt.advanceClock("3d");
  const done = await flow.waitFor("COMPLETED");
  assert.deepEqual(done.result, { uid: "ada", startsOn: null, reminded: "maria" });
  assert.deepEqual(sent, ["ada: Welcome!", "maria: Please confirm when ada starts."]);
});
