import t from "tap";
import { changeWindow, parseMoment, parseSpan, readSpan } from "../../src/rest/time.ts";

// Sunday 22 November 2026, 15:30 UTC (16:30 in Berlin, 07:30 in Los Angeles).
const NOW = new Date("2026-11-22T15:30:00Z");
const berlin = { now: NOW, timeZone: "Europe/Berlin" };
const utc = { now: NOW, timeZone: "UTC" };
const iso = (text: string, clock = berlin) => parseMoment("since", text, clock).toISOString();

t.test("ISO 8601 moments, with an offset or read in the time zone", async (t) => {
  t.equal(iso("2026-11-20T10:00:00Z"), "2026-11-20T10:00:00.000Z");
  t.equal(iso("2026-11-20T10:00:00.5+02:00"), "2026-11-20T08:00:00.500Z");
  t.equal(iso("2026-11-20T10:00:00-0530"), "2026-11-20T15:30:00.000Z");
  t.equal(iso("2026-11-20t10:00z"), "2026-11-20T10:00:00.000Z", "letter case");
  t.equal(iso("2026-11-20T10:00"), "2026-11-20T09:00:00.000Z", "no offset: Berlin");
  t.equal(iso("2026-07-20T10:00"), "2026-07-20T08:00:00.000Z", "summer time");
  t.equal(iso("2026-11-20"), "2026-11-19T23:00:00.000Z", "a date: the start of its day");
  t.equal(iso("2026-11-20", utc), "2026-11-20T00:00:00.000Z");
});

t.test("now, now-<duration> and bare durations", async (t) => {
  t.equal(iso("now"), NOW.toISOString());
  t.equal(iso("now-1h"), "2026-11-22T14:30:00.000Z");
  t.equal(iso("NOW - 7d"), "2026-11-15T15:30:00.000Z");
  t.equal(iso("now+1h30m"), "2026-11-22T17:00:00.000Z");
  t.equal(iso("now-P1M"), "2026-10-22T14:30:00.000Z", "a calendar month back, across summer time");
  t.equal(iso("24h"), "2026-11-21T15:30:00.000Z");
  t.equal(iso("2w"), "2026-11-08T15:30:00.000Z");
  t.equal(iso("PT90M"), "2026-11-22T14:00:00.000Z");
  t.equal(iso("P1DT12H"), "2026-11-21T03:30:00.000Z");
  t.equal(iso("500ms"), "2026-11-22T15:29:59.500Z");
});

t.test("phrases are calendar periods in the zone, or rolling spans", async (t) => {
  t.equal(iso("today"), "2026-11-21T23:00:00.000Z");
  t.equal(iso("Yesterday"), "2026-11-20T23:00:00.000Z");
  t.equal(iso("this week"), "2026-11-15T23:00:00.000Z", "ISO weeks start on Monday");
  t.equal(iso("last  week"), "2026-11-08T23:00:00.000Z", "blanks collapse");
  t.equal(iso("this month"), "2026-10-31T23:00:00.000Z");
  t.equal(iso("last month"), "2026-09-30T22:00:00.000Z", "October began in summer time");
  t.equal(iso("this year"), "2025-12-31T23:00:00.000Z");
  t.equal(iso("last year"), "2024-12-31T23:00:00.000Z");
  t.equal(iso("last 3 days"), "2026-11-19T15:30:00.000Z");
  t.equal(iso("last 1 hour"), "2026-11-22T14:30:00.000Z");
  t.equal(iso("2 weeks ago"), "2026-11-08T15:30:00.000Z");
  t.equal(iso("last 2 months"), "2026-09-22T14:30:00.000Z");
  t.equal(iso("1 year ago"), "2025-11-22T15:30:00.000Z");
  t.equal(iso("today", { now: NOW, timeZone: "America/Los_Angeles" }), "2026-11-22T08:00:00.000Z");
  t.equal(
    iso("today", { now: new Date("2026-11-22T23:30:00Z"), timeZone: "Asia/Tokyo" }),
    "2026-11-22T15:00:00.000Z",
    "already Monday in Tokyo",
  );
  t.equal(
    iso("this week", { now: new Date("2026-11-22T23:30:00Z"), timeZone: "Asia/Tokyo" }),
    "2026-11-22T15:00:00.000Z",
  );
  t.equal(
    iso("last month", { now: new Date("2026-01-15T00:00:00Z"), timeZone: "UTC" }),
    "2025-12-01T00:00:00.000Z",
    "across the year",
  );
  t.equal(
    iso("now-1y", { now: new Date("2026-03-31T12:00:00Z"), timeZone: "UTC" }),
    iso("now-P1Y", { now: new Date("2026-03-31T12:00:00Z"), timeZone: "UTC" }),
    "years, as retention's horizon writes them",
  );
  t.equal(
    iso("now-P1M", { now: new Date("2026-03-31T12:00:00Z"), timeZone: "UTC" }),
    "2026-02-28T12:00:00.000Z",
    "a month back from the 31st ends on the month's last day",
  );
});

t.test("anything else is a 400 naming the accepted forms", async (t) => {
  for (const text of [
    "",
    "tomorrow",
    "next week",
    "2026-02-30",
    "2026-11-20T25:00",
    "now-",
    "1.5h",
    "30m1h",
    "P",
    "PT",
    "-1h",
    "last 0x days",
    "2026-11-20T10:00+25:00",
    "now-99999999w",
    "10000-01-01",
  ]) {
    t.throws(
      () => parseMoment("at", text, berlin),
      {
        code: "ANNAL_PARAMETER_INVALID",
        status: 400,
        details: { parameter: "at", expected: /ISO 8601/ },
      },
      JSON.stringify(text),
    );
  }
});

t.test("spans: compact or ISO 8601, longer than zero", async (t) => {
  t.same(readSpan("1h30m"), { ms: 5_400_000, months: 0 });
  t.same(readSpan("P1Y2M3DT4H5M6.5S"), {
    ms: 3 * 86_400_000 + 4 * 3_600_000 + 5 * 60_000 + 6_500,
    months: 14,
  });
  t.same(parseSpan("range", "24h"), { ms: 86_400_000, months: 0 });
  for (const text of ["0h", "PT0S", "h", "1x", "P1", "yesterday"]) {
    t.throws(
      () => parseSpan("range", text),
      { code: "ANNAL_PARAMETER_INVALID", details: { parameter: "range" } },
      text,
    );
  }
});

t.test("a change window: since alone, range alone, or both", async (t) => {
  const since = new Date("2026-11-20T00:00:00Z");
  const day = { ms: 86_400_000, months: 0 };
  t.same(changeWindow(since, undefined, utc), { from: since });
  t.same(changeWindow(undefined, day, utc), { from: new Date("2026-11-21T15:30:00Z") });
  t.same(changeWindow(since, day, utc), { from: since, to: new Date("2026-11-21T00:00:00Z") });
  t.same(changeWindow(undefined, undefined, utc), {});
});
