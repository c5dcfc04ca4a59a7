import t from "tap";
import { z } from "zod";
import { defineWorkflow, TimeoutError } from "annal";
import { workflowTest } from "annal/testing";
import { formatInTimeZone } from "../../src/time/index.ts";

t.setTimeout(120_000);
// Assigning undefined would set the text "undefined": only where the suite gave a server.
if (process.env.ANNAL_TEST_POSTGRES_URL)
  process.env.DATABASE_URL ??= process.env.ANNAL_TEST_POSTGRES_URL;

const BERLIN = {
  name: "de-be",
  timeZone: "Europe/Berlin",
  holidays: { country: "DE", region: "BE" },
};
const approval = z.object({ ok: z.boolean() });

const access = defineWorkflow({
  name: "access",
  version: 1,
  parameters: z.object({}),
  until: { businessDays: 10 },
  async run(flow) {
    for (const name of ["approve", "escalated"]) {
      try {
        await flow.dialog({ name, assignees: ["owner"], schema: approval, until: "1bd" });
        return name;
      } catch (error) {
        if (!(error instanceof TimeoutError)) throw error;
      }
    }
    return "expired";
  },
});

const wall = (iso: string | null) =>
  iso === null ? null : formatInTimeZone(new Date(iso), "Europe/Berlin", "EEE yyyy-MM-dd HH:mm");

t.test(
  "deadlines in business days: holidays, and a calendar changed after one was set",
  async (t) => {
    const wt = await workflowTest({ workflows: [access], calendars: [BERLIN] });
    t.teardown(() => wt.close());
    const dialog = async (
      instance: { state(): Promise<{ calls: ReadonlyMap<number, unknown> }> },
      name: string,
    ) =>
      [...(await instance.state()).calls.values()].find(
        (call) =>
          (call as { kind: string; name?: string }).kind === "dialog" &&
          (call as { name: string }).name === name,
      ) as { until: string | null; state: string } | undefined;

    // Wednesday 23 December 2026, 10:00 in Berlin.
    await wt.advanceClockTo("2026-12-23T09:00:00Z");
    const flow = await wt.start({}, { as: "requester" });
    let state = await flow.waitFor((s) => s.status === "WAITING");
    t.equal(
      wall(state.until),
      "Fri 2027-01-08 10:00",
      "ten working days: 25 Dec and 1 Jan are holidays",
    );
    t.equal(wall((await dialog(flow, "approve"))!.until), "Thu 2026-12-24 10:00");

    // The configuration now makes Christmas Eve a day off: the deadline already set stays.
    wt.useCalendars([{ ...BERLIN, dates: ["2026-12-24"] }]);
    await wt.advanceClock("30m");
    t.equal(wall((await dialog(flow, "approve"))!.until), "Thu 2026-12-24 10:00", "not moved");
    await wt.advanceClockTo("2026-12-24T09:00:05Z");
    state = await flow.waitFor((s) =>
      [...s.calls.values()].some((call) => call.kind === "dialog" && call.name === "escalated"),
    );
    t.equal((await dialog(flow, "approve"))!.state, "timed_out", "it passed when it was set to");

    // The next one is set under the new calendar: 24 (own), 25 (public), 26 and 27 (weekend) off;
    // its count starts on Monday 28 December at 09:00 and one working day ends at 17:00.
    t.equal(wall((await dialog(flow, "escalated"))!.until), "Mon 2026-12-28 17:00");
    await wt.advanceClock("3d");
    t.equal((await flow.waitFor("WAITING")).status, "WAITING", "not yet on Sunday");
    await wt.advanceClockTo("2026-12-28T16:00:01Z");
    const done = await flow.waitFor("COMPLETED");
    t.equal(done.result, "expired");
  },
);

t.test("a deadline in business days without a calendar is refused with a hint", async (t) => {
  const wt = await workflowTest({ workflows: [access] });
  t.teardown(() => wt.close());
  await t.rejects(wt.start({}, { as: "requester" }), {
    code: "WF_TEST_MUTATION_REJECTED",
    cause: { code: "WF_VALIDATION", hint: /\[\[calendars\]\]/ },
  });
});
