import t from "tap";
import { deadline, durationMs } from "../../src/workflow/time.ts";

const NOW = new Date("2026-11-22T15:30:00Z");

t.test("until and step durations take the one grammar: weeks and ISO 8601 too", async (t) => {
  t.equal(deadline("1w", NOW), "2026-11-29T15:30:00.000Z");
  t.equal(deadline("PT5M", NOW), "2026-11-22T15:35:00.000Z");
  t.equal(deadline("P1DT12H", NOW), "2026-11-24T03:30:00.000Z");
  t.equal(deadline("2026-11-24T10:00:00+02:00", NOW), "2026-11-24T08:00:00.000Z");
  t.equal(durationMs("P1W", "timeout"), 604_800_000);
  t.throws(() => durationMs("P1M", "timeout"), { code: "WF_VALIDATION", hint: /PT5M/ });
  t.throws(() => deadline("soon", NOW), { code: "WF_VALIDATION" });
});

t.test("a deadline without an offset is UTC, whatever the machine's zone", async (t) => {
  const zone = process.env.TZ;
  process.env.TZ = "Asia/Kolkata";
  t.teardown(() => {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
  });
  t.equal(new Date(2026, 10, 24).getTimezoneOffset(), -330, "the process runs in Kolkata");
  t.equal(deadline("2026-11-24T10:00:00", NOW), "2026-11-24T10:00:00.000Z");
});
