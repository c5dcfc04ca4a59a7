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
