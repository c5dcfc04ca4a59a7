import t from "tap";
import { calendarsSection } from "../../src/config/sections/calendars.ts";
import { calendarsOf } from "../../src/time/business.ts";
import { deadline } from "../../src/workflow/time.ts";

const BERLIN = {
  name: "de-be",
  timeZone: "Europe/Berlin",
  holidays: { country: "DE", region: "BE" },
};

function calendars(tables: readonly Record<string, unknown>[]) {
  return calendarsOf(calendarsSection().parse(tables));
}

const deBe = calendars([BERLIN]);
const at = (iso: string, until: Parameters<typeof deadline>[0], c = deBe) =>
  deadline(until, new Date(iso), null, c);

t.test("business days skip the weekend and keep the hour on the wall", async (t) => {
  // Friday 27 November 2026, 10:00 in Berlin.
  t.equal(at("2026-11-27T09:00:00Z", "1bd"), "2026-11-30T09:00:00.000Z", "Monday 10:00");
  t.equal(at("2026-11-27T09:00:00Z", "3bd"), "2026-12-02T09:00:00.000Z", "Wednesday 10:00");
  t.equal(
    at("2026-11-27T09:00:00Z", { businessDays: 3, calendar: "de-be" }),
    "2026-12-02T09:00:00.000Z",
    "the object form names the calendar",
  );
  // Saturday noon: the count starts on Monday morning, three whole days end Wednesday 17:00.
  t.equal(at("2026-11-28T11:00:00Z", "3bd"), "2026-12-02T16:00:00.000Z");
});

t.test("business hours run through working hours only", async (t) => {
  // Friday 15:00: two hours on Friday, two on Monday from 09:00.
  t.equal(at("2026-11-27T14:00:00Z", "4bh"), "2026-11-30T10:00:00.000Z");
  // Monday 07:00, before the day opens.
  t.equal(at("2026-11-30T06:00:00Z", "1bh"), "2026-11-30T09:00:00.000Z");
  t.equal(
    at("2026-11-30T06:00:00Z", { businessDays: 1, businessHours: 2 }),
    "2026-12-01T10:00:00.000Z",
    "days and hours together",
  );
});

t.test("public holidays of the region and days of one's own are days off", async (t) => {
  // Wednesday 23 December 10:00; 25 December is a public holiday, 26 and 27 the weekend.
  t.equal(at("2026-12-23T09:00:00Z", "2bd"), "2026-12-28T09:00:00.000Z");
  const withEve = calendars([{ ...BERLIN, dates: ["2026-12-24"] }]);
  t.equal(at("2026-12-23T09:00:00Z", "2bd", withEve), "2026-12-29T09:00:00.000Z");
  t.equal(withEve.get()!.dayOff(2026, 12, 25), "1. Weihnachtstag");
  t.equal(withEve.get()!.dayOff(2026, 12, 24), "a day off of the calendar's own");
  t.equal(withEve.get()!.dayOff(2026, 12, 23), undefined);
  // 8 March is a public holiday in Berlin only: Brandenburg works (Monday 8 March 2027).
  const brandenburg = calendars([
    { ...BERLIN, name: "de-bb", holidays: { country: "DE", region: "BB" } },
  ]);
  t.equal(at("2027-03-05T09:00:00Z", "1bd"), "2027-03-09T09:00:00.000Z", "Berlin skips 8 March");
  t.equal(at("2027-03-05T09:00:00Z", "1bd", brandenburg), "2027-03-08T09:00:00.000Z");
});

t.test("a daylight-saving change moves the offset, not the hour on the wall", async (t) => {
  // Friday 27 March 2026 10:00 CET; clocks go forward on Sunday 29 March.
  t.equal(at("2026-03-27T09:00:00Z", "1bd"), "2026-03-30T08:00:00.000Z", "Monday 10:00 CEST");
  // A year later the same Friday is Good Friday and the Monday Easter Monday: the count
  // starts on Tuesday 30 March 2027 at 09:00 CEST and one whole day ends at 17:00.
  t.equal(at("2027-03-26T09:00:00Z", "1bd"), "2027-03-30T15:00:00.000Z", "after Easter");
  // Friday 23 October 2026 10:00 CEST; clocks go back on Sunday 25 October.
  t.equal(at("2026-10-23T08:00:00Z", "1bd"), "2026-10-26T09:00:00.000Z", "Monday 10:00 CET");
});

t.test("working days and hours of one's own; the default calendar", async (t) => {
  const both = calendars([
    BERLIN,
    {
      name: "ny",
      timeZone: "America/New_York",
      workingDays: [1, 2, 3, 4],
      workingHours: "08:00-16:30",
      default: true,
    },
  ]);
  t.equal(both.get()!.spec.name, "ny", "the one marked default");
  t.equal(both.get()!.dayMs, 8.5 * 3_600_000);
  // Thursday 26 November 2026 12:00 in New York (no holidays configured: Thanksgiving works):
  // 4.5 hours on Thursday; Friday to Sunday are off; 4 more on Monday from 08:00.
  t.equal(at("2026-11-26T17:00:00Z", "1bd", both), "2026-11-30T17:00:00.000Z");
  t.equal(
    calendars([BERLIN, { ...BERLIN, name: "other" }]).get()!.spec.name,
    "de-be",
    "else the first",
  );
});

t.test("a deadline in business time needs a known calendar and whole amounts", async (t) => {
  t.throws(() => deadline("3bd", new Date()), {
    code: "WF_VALIDATION",
    message: /needs a calendar/,
    hint: /\[\[calendars\]\]/,
  });
  t.throws(() => at("2026-11-27T09:00:00Z", { businessDays: 1, calendar: "fr" }), {
    code: "WF_VALIDATION",
    message: /no calendar is named "fr"/,
    hint: /de-be/,
  });
  t.throws(() => at("2026-11-27T09:00:00Z", { businessDays: 1.5 }), { code: "WF_VALIDATION" });
  t.throws(() => at("2026-11-27T09:00:00Z", { businessHours: -1 }), { code: "WF_VALIDATION" });
  t.equal(
    deadline("3bd", new Date("2026-11-27T09:00:00Z"), "2026-11-30T00:00:00.000Z", deBe),
    "2026-11-30T00:00:00.000Z",
    "the enclosing deadline still caps it",
  );
});

t.test("[[calendars]] refuses what it cannot count in", async (t) => {
  const issues = (tables: unknown) =>
    calendarsSection()
      .safeParse(tables)
      .error?.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`) ?? [];
  t.match(issues([{ ...BERLIN, holidays: { country: "DE", region: "XX" } }]), [
    /holidays: the holiday library knows no such country or region/,
  ]);
  t.match(issues([{ ...BERLIN, workingHours: "17:00-09:00" }]), [
    /workingHours: .*end after the start/,
  ]);
  t.match(issues([{ ...BERLIN, timeZone: "Mars/Olympus" }]), [
    /timeZone: expected an IANA time zone/,
  ]);
  t.match(issues([BERLIN, BERLIN]), [/1.name: "de-be" is named twice/]);
  t.match(issues([{ ...BERLIN, workingDays: [] }]), [
    /workingDays: a calendar needs at least one working day/,
  ]);
  t.match(issues([{ ...BERLIN, dates: ["2026-13-01"] }]), [/dates.0: expected a date YYYY-MM-DD/]);
  t.same(issues([BERLIN]), []);
});
