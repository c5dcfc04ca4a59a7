import t from "tap";
import { readStream } from "../../src/store/index.ts";
import {
  advanceInstance,
  completeDialog,
  dialogIdOf,
  startWorkflow,
  StickyRuns,
  WAKE_QUEUE,
  type EngineDeps,
  type InstanceState,
} from "../../src/workflow/index.ts";
import {
  actor,
  definitionsDir,
  workflowFixture,
  type WorkflowFixture,
} from "../support/workflow.ts";

t.setTimeout(180_000);

/**
 * Two dialogs between steps. The run function counts its own entries in `globalThis` (the
 * bundle runs in this process): a replay enters it again, a resumed run does not. Each
 * answer's check (`completeDialog` finds the dialog's schema by a probe of the code) enters
 * it once too: `ANSWERS` entries.
 */
const olga = actor("olga");

const REVIEW = `
import { defineWorkflow } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "review",
  version: 1,
  parameters: z.object({ tag: z.string() }),
  async run(flow, { tag }) {
    const entries = (globalThis.__reviewEntries ??= {});
    entries[tag] = (entries[tag] ?? 0) + 1;
    const first = await flow.step("first", () => tag + ":1");
    const a = await flow.dialog({ name: "a", assignees: ["${olga.accountId}"], schema: z.object({ n: z.number() }) });
    const second = await flow.step("second", () => first + "+" + a.answer.n);
    const id = flow.uuid();
    const b = await flow.dialog({ name: "b", assignees: ["${olga.accountId}"], schema: z.object({ n: z.number() }) });
    const third = await flow.step("third", () => second + "+" + b.answer.n);
    return { third, id };
  },
});
`;
const entries = (tag: string) =>
  ((globalThis as { __reviewEntries?: Record<string, number> }).__reviewEntries ?? {})[tag] ?? 0;

const ANSWERS = 2;

const pendingAt = (seq: number) => (state: InstanceState) => {
  const call = state.calls.get(seq);
  return call?.kind === "dialog" && call.state === "pending";
};

/** Runs one instance through both dialogs; `between` runs while it waits at the first. */
async function review(f: WorkflowFixture, tag: string, between: () => unknown = () => {}) {
  const { instanceId } = await startWorkflow(f, {
    name: "review",
    parameters: { tag },
    as: actor("rita"),
  });
  await f.settled(instanceId, pendingAt(2));
  await between();
  await completeDialog(f, { dialogId: dialogIdOf(instanceId, 2), answer: { n: 2 }, as: olga });
  await f.settled(instanceId, pendingAt(5));
  await completeDialog(f, { dialogId: dialogIdOf(instanceId, 5), answer: { n: 5 }, as: olga });
  const done = await f.settled(instanceId, "COMPLETED");
  const events = await readStream(f.pool, `workflow-${instanceId}`);
  return {
    result: done.result as { third: string; id: string },
    types: events.map((event) => event.type),
  };
}

t.test("a parked run goes on from where its code waits: no call is replayed", async (t) => {
  const dir = definitionsDir(t, { "review.ts": REVIEW });
  const f = await workflowFixture(t, { dir });
  const { result } = await review(f, "kept");
  t.equal(result.third, "kept:1+2+5");
  t.equal(entries("kept") - ANSWERS, 1, "the run function was entered once, for three wakes");
  t.ok(f.engine.sticky.stats.hits >= 2, "both answers resumed the parked run");
  t.equal(f.engine.sticky.kept, 0, "an ended run is not kept");
});

t.test(
  "a run evicted mid-instance is replayed from the log, with the same history as without the cache",
  async (t) => {
    const dir = definitionsDir(t, { "review.ts": REVIEW });
    const uncached = await workflowFixture(t, { dir, stickyRuns: 0 });
    const plain = await review(uncached, "plain");
    t.equal(entries("plain") - ANSWERS, 3, "without the cache every wake replays");
    await uncached.engine.stop();

    const f = await workflowFixture(t, { dir });
    const evicted = await review(f, "evicted", () => {
      t.equal(f.engine.sticky.kept, 1, "the run waits parked at the first dialog");
      f.engine.sticky.clear();
    });
    t.equal(entries("evicted") - ANSWERS, 2, "entered again once, after the eviction");
    t.equal(evicted.result.third, plain.result.third.replace("plain", "evicted"));
    t.same(evicted.types, plain.types, "the same events in the same order");
    t.ok(f.engine.sticky.stats.misses >= 1);
  },
);

t.test(
  "a kept run that another worker overtook is detected by the stream's version and replayed",
  async (t) => {
    const dir = definitionsDir(t, { "review.ts": REVIEW });
    // No engine: this test wakes the instance itself, on two "workers" of its own.
    const f = await workflowFixture(t, { dir, startEngine: false });
    await f.jobs.ensureQueue(WAKE_QUEUE);
    const here: EngineDeps = { ...f, sticky: new StickyRuns(10) };
    const elsewhere: EngineDeps = { ...f, sticky: new StickyRuns(10) };
    const { instanceId } = await startWorkflow(f, {
      name: "review",
      parameters: { tag: "stale" },
      as: actor("rita"),
    });
    t.equal(await advanceInstance(here, instanceId), "advanced");
    t.equal(here.sticky!.kept, 1, "parked here at the first dialog");
    t.equal(entries("stale"), 1);

    // The answer's wake is taken by the other worker, which replays and goes on to `b`.
    await completeDialog(f, { dialogId: dialogIdOf(instanceId, 2), answer: { n: 2 }, as: olga });
    let before = entries("stale");
    t.equal(await advanceInstance(elsewhere, instanceId), "advanced");
    t.equal(entries("stale") - before, 1, "the other worker replayed (it kept no run)");
    t.ok(pendingAt(5)(await f.state(instanceId)));

    // The next wake comes here, where the run parked at `a` is now behind the log.
    await completeDialog(f, { dialogId: dialogIdOf(instanceId, 5), answer: { n: 5 }, as: olga });
    before = entries("stale");
    t.equal(await advanceInstance(here, instanceId), "advanced");
    t.equal(here.sticky!.stats.stale, 1, "the kept run was found stale");
    t.equal(entries("stale") - before, 1, "and the instance replayed from the log");
    const done = await f.state(instanceId);
    t.equal(done.status, "COMPLETED");
    t.match(done.result, { third: "stale:1+2+5" });
    const events = await readStream(f.pool, `workflow-${instanceId}`);
    const scheduled = events
      .filter((event) => event.type === "StepScheduled")
      .map((event) => (event.data as { name: string }).name);
    t.same(scheduled, ["first", "second", "third"], "no step ran twice");
  },
);

t.test("an answer alone after a kept run's own events resumes it", async (t) => {
  const dir = definitionsDir(t, { "review.ts": REVIEW });
  const f = await workflowFixture(t, { dir, startEngine: false });
  await f.jobs.ensureQueue(WAKE_QUEUE);
  const here: EngineDeps = { ...f, sticky: new StickyRuns(10) };
  const { instanceId } = await startWorkflow(f, {
    name: "review",
    parameters: { tag: "answered" },
    as: actor("rita"),
  });
  await advanceInstance(here, instanceId);
  await completeDialog(f, { dialogId: dialogIdOf(instanceId, 2), answer: { n: 2 }, as: olga });
  await advanceInstance(here, instanceId);
  await completeDialog(f, { dialogId: dialogIdOf(instanceId, 5), answer: { n: 5 }, as: olga });
  await advanceInstance(here, instanceId);
  t.same(here.sticky!.stats, { hits: 2, misses: 1, stale: 0, evicted: 0 });
  t.equal(entries("answered") - ANSWERS, 1);
  t.match((await f.state(instanceId)).result, { third: "answered:1+2+5" });
});

t.test(
  "an answer to the dialog a run waits at parked here is checked without replaying the code",
  async (t) => {
    const dir = definitionsDir(t, { "review.ts": REVIEW });
    const f = await workflowFixture(t, { dir, startEngine: false });
    await f.jobs.ensureQueue(WAKE_QUEUE);
    // The commands share the worker's parked runs, as in one annal process.
    const here: EngineDeps = { ...f, sticky: new StickyRuns(10) };
    const { instanceId } = await startWorkflow(here, {
      name: "review",
      parameters: { tag: "checked" },
      as: actor("rita"),
    });
    await advanceInstance(here, instanceId);
    await t.rejects(
      completeDialog(here, {
        dialogId: dialogIdOf(instanceId, 2),
        answer: { n: "two" },
        as: olga,
      }),
      { code: "WF_VALIDATION" },
      "the parked run's schema refuses a wrong answer",
    );
    await completeDialog(here, { dialogId: dialogIdOf(instanceId, 2), answer: { n: 2 }, as: olga });
    await advanceInstance(here, instanceId);
    await completeDialog(here, { dialogId: dialogIdOf(instanceId, 5), answer: { n: 5 }, as: olga });
    await advanceInstance(here, instanceId);
    t.equal(entries("checked"), 1, "the run function was entered once: no probe, no replay");
    t.same(here.sticky!.stats, { hits: 2, misses: 1, stale: 0, evicted: 0 });
    t.match((await f.state(instanceId)).result, { third: "checked:1+2+5" });
  },
);
