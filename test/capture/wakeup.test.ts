import t from "tap";
import { Wakeup } from "../../src/capture/wakeup.ts";

const never = new AbortController().signal;

t.test("a wake ends the wait under way", async (t) => {
  const wakeup = new Wakeup();
  const started = performance.now();
  const waiting = wakeup.wait(60_000, never);
  wakeup.wake();
  await waiting;
  t.ok(performance.now() - started < 10_000, "long before its time");
});

t.test("wakes while no one waits end the next wait only", async (t) => {
  const wakeup = new Wakeup();
  wakeup.wake();
  wakeup.wake();
  const started = performance.now();
  await wakeup.wait(60_000, never);
  t.ok(performance.now() - started < 10_000, "the next wait ends at once");
  const again = performance.now();
  await wakeup.wait(50, never);
  t.ok(performance.now() - again >= 45, "the one after waits its time");
});

t.test("an abort ends the wait, and a wait on an aborted signal does not start", async (t) => {
  const wakeup = new Wakeup();
  const stop = new AbortController();
  const waiting = wakeup.wait(60_000, stop.signal);
  stop.abort();
  await waiting;
  await wakeup.wait(60_000, stop.signal);
  t.pass("both returned");
});
