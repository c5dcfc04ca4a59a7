import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import t from "tap";

/**
 * No test sleeps for a fixed time and hopes the other side is done by then. A test waits for
 * the condition itself (`eventually` in test/support/eventually.ts, `nextSecond` for the
 * clock) or stops the code where it needs it (a pause point, test/support/pause-points.ts).
 * This fails on any timer in a file under `test/` (`setTimeout`, `setInterval`,
 * `node:timers`, `scheduler.wait`; tap's own `t.setTimeout`, which bounds a whole test, is
 * not one), except in the files below, each with its reason.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");

const ALLOWED: Readonly<Record<string, string>> = {
  "test/support/eventually.ts":
    "the one polling helper: it pauses between two checks of the condition it waits for",
  "test/cli/support.ts":
    "a deadline, not a wait: it rejects the wait for annal's 'serves' log line if none comes",
  "test/architecture/no-sleeps.test.ts": "this check: its examples of what it finds",
  "test/scale/support/load.ts":
    "a load generator's pacing after a failed request, as a real client's; it waits for nothing",
  "test/support/loop-holds.ts":
    "a probe, not a wait: a 1 ms timer whose turns measure how long the event loop is held; it waits for nothing",
  "test/scale/support/workflows.ts":
    "the workflow clients' pacing between starts and between empty inbox reads, as a real client's; it waits for nothing",
};

/** The timers `text` uses, as `line: code`. */
export function timersIn(text: string): string[] {
  const timer =
    /(?<![.\w$])(?:setTimeout|setInterval)\s*\(|["'](?:node:)?timers(?:\/promises)?["']|\bscheduler\.wait\s*\(/;
  return text
    .split("\n")
    .flatMap((line, i) => (timer.test(line) ? [`${i + 1}: ${line.trim()}`] : []));
}

function testSources(): string[] {
  return readdirSync(path.join(ROOT, "test"), { withFileTypes: true, recursive: true })
    .filter((f) => f.isFile() && f.name.endsWith(".ts"))
    .map((f) => path.relative(ROOT, path.join(f.parentPath, f.name)));
}

t.test("no test waits on a timer, outside the allowed files", async (t) => {
  const found = testSources()
    .filter((file) => !(file in ALLOWED))
    .flatMap((file) =>
      timersIn(readFileSync(path.join(ROOT, file), "utf8")).map((hit) => `${file}:${hit}`),
    );
  t.same(found, [], "wait for the condition (eventually) or use a pause point instead");
});

t.test("every allowed file still has a timer, or leaves the list", async (t) => {
  for (const file of Object.keys(ALLOWED)) {
    t.not(timersIn(readFileSync(path.join(ROOT, file), "utf8")).length, 0, file);
  }
});

t.test("the check finds the ways to sleep, and not tap's test timeout", async (t) => {
  t.same(timersIn("await new Promise((resolve) => setTimeout(resolve, 50));").length, 1);
  t.same(timersIn("await new Promise((r) =>\n  setTimeout(r, 1001 - (Date.now() % 1000)));"), [
    "2: setTimeout(r, 1001 - (Date.now() % 1000)));",
  ]);
  t.same(timersIn('import { setTimeout as sleep } from "node:timers/promises";').length, 1);
  t.same(timersIn("const poll = setInterval(check, 10);").length, 1);
  t.same(timersIn("await scheduler.wait(100);").length, 1);
  t.same(timersIn("t.setTimeout(300_000);\nclearTimeout(timer);"), []);
});
