import t from "tap";
import { Wakeup } from "../../src/capture/wakeup.ts";

const never = new AbortController().signal;

/**
 * Whether `promise` has settled by the time this turn's promise jobs and pending I/O
 * callbacks have run: a wait that a wake or an abort ends settles at once, one that waits
 * its time does not. No clock is read, so a loaded machine cannot make it pass or fail.
 */
function settledNow(promise: Promise<unknown>): Promise<boolean> {
  return Promise.race([
    promise.then(() => true),
    new Promise<boolean>((resolve) => setImmediate(() => resolve(false))),
  ]);
}

t.test("a wake ends the wait under way", async (t) => {
  const wakeup = new Wakeup();
  const waiting = wakeup.wait(60_000, never);
  t.equal(await settledNow(waiting), false, "it waits until woken");
  wakeup.wake();
  t.equal(await settledNow(waiting), true, "the wake ends it");
});

t.test("wakes while no one waits end the next wait only", async (t) => {
  const wakeup = new Wakeup();
  wakeup.wake();
  wakeup.wake();
  t.equal(await settledNow(wakeup.wait(60_000, never)), true, "the next wait ends at once");
  const after = wakeup.wait(60_000, never);
  t.equal(await settledNow(after), false, "the one after waits");
  wakeup.wake();
  await after;
});

t.test("a wait ends when its time is up, not before", async (t) => {
  const wakeup = new Wakeup();
  const started = performance.now();
  const waiting = wakeup.wait(50, never);
  t.equal(await settledNow(waiting), false, "it waits");
  await waiting;
  // A lower bound only: load makes a wait longer, never shorter.
  t.ok(performance.now() - started >= 45, "not before its time");
});

t.test("an abort ends the wait, and a wait on an aborted signal does not start", async (t) => {
  const wakeup = new Wakeup();
  const stop = new AbortController();
  const waiting = wakeup.wait(60_000, stop.signal);
  t.equal(await settledNow(waiting), false, "it waits until aborted");
  stop.abort();
  t.equal(await settledNow(waiting), true, "the abort ends it");
  t.equal(await settledNow(wakeup.wait(60_000, stop.signal)), true, "an aborted signal: at once");
});
