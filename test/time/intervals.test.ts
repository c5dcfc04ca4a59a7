import t from "tap";
import { readInterval } from "../../src/time/index.ts";

const clock = { now: new Date("2026-11-22T15:30:00Z"), timeZone: "UTC" };
const read = (text: string) => {
  const reading = readInterval(text, clock);
  return reading.interval
    ? {
        start: reading.interval.start?.toISOString() ?? null,
        end: reading.interval.end?.toISOString() ?? null,
      }
    : reading.problem.kind;
};

t.test("an interval is two moments, or a moment and a duration, or an open side", async (t) => {
  t.same(read("2026-03-01/2026-04-01"), {
    start: "2026-03-01T00:00:00.000Z",
    end: "2026-04-01T00:00:00.000Z",
  });
  t.same(read("2026-03-01/P1M"), {
    start: "2026-03-01T00:00:00.000Z",
    end: "2026-04-01T00:00:00.000Z",
  });
  t.same(read("P7D/now"), { start: "2026-11-15T15:30:00.000Z", end: "2026-11-22T15:30:00.000Z" });
  t.same(read(" last month / this month "), {
    start: "2026-10-01T00:00:00.000Z",
    end: "2026-11-01T00:00:00.000Z",
  });
  t.same(read("2026-03-01T10:00:00+02:00/.."), { start: "2026-03-01T08:00:00.000Z", end: null });
  t.same(read("../2026-03-01"), { start: null, end: "2026-03-01T00:00:00.000Z" });
  t.same(read("../.."), { start: null, end: null });
});

t.test("what is no interval says why, in two kinds", async (t) => {
  for (const text of [
    "2026-03-01",
    "2026-03-01/",
    "/now",
    "a/b/c",
    "P1D/P2D",
    "P1D/..",
    "../P1D",
    "2026-03-01/soon",
    "11/22/2026",
    "9999-12-31/P1Y",
  ]) {
    t.equal(read(text), "syntax", text);
  }
  for (const text of ["2026-03-02/2026-03-01", "2026-03-01/2026-03-01", "now/yesterday"]) {
    t.equal(read(text), "reversed", text);
  }
  const reversed = readInterval("2026-03-02/2026-03-01", clock);
  t.match(reversed.problem, {
    start: new Date("2026-03-02T00:00:00Z"),
    end: new Date("2026-03-01T00:00:00Z"),
  });
});
