import t from "tap";
import { parseDuration } from "../../src/config/index.ts";

t.test("durations parse to milliseconds", async (t) => {
  t.equal(parseDuration("500ms"), 500);
  t.equal(parseDuration("2s"), 2_000);
  t.equal(parseDuration("5m"), 300_000);
  t.equal(parseDuration("1h"), 3_600_000);
  t.equal(parseDuration("1d"), 86_400_000);
  t.equal(parseDuration("0"), 0);
  t.equal(parseDuration("0s"), 0);
  t.equal(parseDuration("1h30m"), 5_400_000);
  t.equal(parseDuration("1d2h3m4s5ms"), 93_784_005);
});

t.test("durations take weeks and ISO 8601, the grammar of every channel", async (t) => {
  t.equal(parseDuration("1w"), 604_800_000);
  t.equal(parseDuration("2w3d"), 17 * 86_400_000);
  t.equal(parseDuration("PT5M"), 300_000);
  t.equal(parseDuration("pt1.5s"), 1_500);
  t.equal(parseDuration("P3D"), 3 * 86_400_000);
  t.equal(parseDuration("P1W"), 604_800_000);
  t.equal(parseDuration("P1DT12H"), 129_600_000);
  for (const text of ["P1M", "P1Y", "P", "PT", "P1DT"]) {
    t.throws(() => parseDuration(text), { code: "ANNAL_DURATION_INVALID", hint: /PT5M/ }, text);
  }
});

t.test("anything else is refused with ANNAL_DURATION_INVALID", async (t) => {
  for (const text of [
    "",
    "2",
    "2 s",
    "1.5s",
    "-1s",
    "2sec",
    "s",
    "30m1h",
    "1s1s",
    "1h 30m",
    "99999999999999999d",
  ]) {
    t.throws(() => parseDuration(text), { code: "ANNAL_DURATION_INVALID", hint: /500ms/ }, text);
  }
});
