import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { PAUSE_POINTS, armPausePoint as armForever, pausePoint } from "../src/pause-points.ts";
import { armPausePoint } from "./support/pause-points.ts";

const POINT = "store.append.afterInsert";

/** An actor that passes `POINT` as `subject` and then notes that it went on. */
function actor(subject?: string) {
  const state = { passed: false, done: Promise.resolve() };
  state.done = pausePoint(POINT, subject).then(() => {
    state.passed = true;
  });
  return state;
}

t.test("a point nobody armed lets every actor pass", async (t) => {
  const a = actor("a");
  await a.done;
  t.ok(a.passed);
  t.equal(pausePoint(POINT), pausePoint(POINT, "b"), "the same settled promise, every time");
});

t.test("an armed point stops the first actor there until the test releases it", async (t) => {
  const point = armPausePoint(t, POINT);
  const first = actor("a");
  const second = actor("b");
  await point.reached();
  await second.done;
  t.ok(second.passed, "the point stops one arrival: the next passes");
  t.notOk(first.passed, "the first stands at the point");
  point.release();
  await first.done;
  t.ok(first.passed, "released, it goes on");
  point.release(); // again: nothing happens
});

t.test("a point armed for a subject stops only that subject", async (t) => {
  const point = armPausePoint(t, POINT, { subject: "b" });
  const a = actor("a");
  const b = actor("b");
  await a.done;
  t.ok(a.passed, "another subject passes");
  await point.reached();
  t.notOk(b.passed);
  point.release();
  await b.done;
  t.ok(b.passed);
});

t.test("two armings stop two actors, in the order armed", async (t) => {
  const forB = armPausePoint(t, POINT, { subject: "b" });
  const any = armPausePoint(t, POINT);
  const a = actor("a");
  const b = actor("b");
  await any.reached();
  await forB.reached();
  t.notOk(a.passed || b.passed, "both stand");
  forB.release();
  await b.done;
  t.notOk(a.passed, "releasing one lets only that one go");
  any.release();
  await a.done;
});

t.test("released before anyone arrived, the point is disarmed", async (t) => {
  const point = armPausePoint(t, POINT);
  point.release();
  const a = actor();
  await a.done;
  t.ok(a.passed);
});

t.test("reached() fails, naming the point, when nobody gets there in time", async (t) => {
  const point = armPausePoint(t, POINT, { subject: "nobody" });
  await t.rejects(point.reached({ timeout: 20 }), {
    message: `pause point ${POINT} (nobody) was not reached within 20 ms`,
  });
  const late = actor("nobody");
  await point.reached();
  t.notOk(late.passed, "the point stays armed: a late arrival stops (the teardown releases it)");
});

t.test("the test's teardown releases a stopped actor", async (t) => {
  let stopped: ReturnType<typeof actor> | undefined;
  await t.test("a test that leaves its actor standing", async (t) => {
    armPausePoint(t, POINT);
    stopped = actor();
  });
  await stopped!.done;
  t.ok(stopped!.passed);
});

t.test("only a listed name can be armed", async (t) => {
  t.throws(() => armForever("store.nowhere" as typeof POINT), {
    message: 'there is no pause point "store.nowhere"',
  });
});

t.test("every listed pause point is placed in src exactly once, and no other", async (t) => {
  const root = path.resolve(import.meta.dirname, "../src");
  const placed = readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((f) => f.isFile() && f.name.endsWith(".ts") && f.name !== "pause-points.ts")
    .flatMap((f) =>
      [
        ...readFileSync(path.join(f.parentPath, f.name), "utf8").matchAll(
          /\bpausePoint\(\s*"([^"]+)"/g,
        ),
      ].map((m) => m[1]!),
    );
  t.same(placed.toSorted(), [...PAUSE_POINTS].toSorted());
});
