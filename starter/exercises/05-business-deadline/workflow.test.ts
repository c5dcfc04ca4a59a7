/** Task 5's tests: `npx annal exercise 5` runs them. Leave them as they are. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { workflowTest } from "annal/testing";
import review from "./workflow.ts";

/** Berlin's office: Monday to Friday, 09:00 to 17:00, Berlin's public holidays off. */
const OFFICE = {
  name: "office",
  timeZone: "Europe/Berlin",
  holidays: { country: "DE", region: "BE" },
};
/** Friday 11 January 2030, 10:00 in Berlin. */
const FRIDAY_10 = "2030-01-11T09:00:00Z";
/** Three working days later: Wednesday 16 January, 10:00 in Berlin. */
const WEDNESDAY_10 = "2030-01-16T09:00:00Z";
const REVIEWER = "uid=rhea,ou=people,dc=example,dc=org";

/** A moment to the minute (the test's clock goes on by a few milliseconds after each move). */
function minute(moment: unknown): string {
  return typeof moment === "string" ? moment.slice(0, 16) : String(moment);
}

async function setup(t: { after(fn: () => unknown): void }) {
  const wt = await workflowTest({ workflows: [review], calendars: [OFFICE] });
  t.after(() => wt.close());
  await wt.advanceClockTo(FRIDAY_10);
  const flow = await wt.start({ uid: "ada", reviewer: REVIEWER }, { as: "hr" });
  return { wt, flow };
}

test("the review's deadline is 3 working days away, past the weekend", async (t) => {
  const { flow } = await setup(t);
  const waiting = await flow.waitFor("WAITING");
  const dialog = [...waiting.calls.values()].find((call) => call.kind === "dialog");
  assert.equal(minute(dialog?.kind === "dialog" ? dialog.until : null), minute(WEDNESDAY_10));
});

test("on Tuesday the review still waits; on Wednesday at 10:00 it expires", async (t) => {
  const { wt, flow } = await setup(t);
  await flow.waitFor("WAITING");
  await wt.advanceClockTo("2030-01-15T09:00:00Z"); // Tuesday 10:00: 4 days, 2 working days
  assert.equal((await flow.state()).status, "WAITING", "2 working days are not 3");
  await wt.advanceClockTo(WEDNESDAY_10);
  const { result } = await flow.waitFor("COMPLETED");
  const { expiredAt, ...rest } = result as { expiredAt?: unknown };
  assert.deepEqual(rest, { uid: "ada", keep: true });
  assert.equal(minute(expiredAt), minute(WEDNESDAY_10));
});

test("an answer before the deadline decides", async (t) => {
  const { flow } = await setup(t);
  await flow.completeActivity("review", { keep: false }, { as: "rhea" });
  assert.deepEqual((await flow.waitFor("COMPLETED")).result, { uid: "ada", keep: false });
});
