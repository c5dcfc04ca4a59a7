/**
 * `npm run bench -- engine-dialogs [--size 10k]`: many instances waiting on a dialog each, then
 * every dialog answered: all complete, the process's RSS along the way, and the time from an
 * answer's commit to the next step's being recorded.
 */
import { readStream } from "../src/store/index.ts";
import { completeDialog, dialogIdOf, startWorkflow } from "../src/workflow/index.ts";
import { benchActor, countEvents, engineBench, until } from "./engine-setup.ts";
import { benchSize, fmt, machine, percentile, recordResults, sizeOption, time } from "./support.ts";

const CLIENTS = 8;
const MiB = 2 ** 20;

export async function engineDialogsBenchmark(): Promise<void> {
  const size = benchSize(10_000);
  const bench = await engineBench("engine-dialogs");
  const rss: { what: string; mib: number }[] = [];
  const sample = (what: string) => rss.push({ what, mib: process.memoryUsage().rss / MiB });
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss / MiB);
  }, 100);
  try {
    const engine = await bench.engine();
    // The commands share the engine's parked runs, as in one annal process: an answer takes
    // the dialog's schema from the waiting run instead of replaying the code.
    const deps = { ...bench.deps, sticky: engine.sticky };
    sample("engine started");
    const ids: string[] = [];
    const startSeconds = await time(async () => {
      await inTurns(size, async () => {
        const { instanceId } = await startWorkflow(deps, {
          name: "approval",
          parameters: { n: ids.length },
          as: benchActor,
        });
        ids.push(instanceId);
      });
      await until(async () => (await countEvents(deps.pool, "DialogOpened")) >= size);
    });
    sample(`${fmt(size)} instances waiting`);
    const kept = engine.sticky.kept;
    const rate = rateOption();
    const answerSeconds = await time(async () => {
      // Open loop: answer i is sent at its moment whatever the engine does, so that a backlog
      // shows in the latencies rather than slowing the answers down.
      const start = performance.now();
      const sent: Promise<unknown>[] = [];
      for (const [index, instanceId] of ids.entries()) {
        const due = start + (index * 1000) / rate - performance.now();
        if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
        sent.push(
          completeDialog(deps, {
            dialogId: dialogIdOf(instanceId, 2),
            answer: { approved: true },
            as: benchActor,
          }),
        );
        if (index === Math.floor(size / 2)) sample("half answered");
      }
      await Promise.all(sent);
      await until(async () => (await countEvents(deps.pool, "WorkflowCompleted")) >= size);
    });
    sample("all completed");
    clearInterval(sampler);
    const latencies: number[] = [];
    for (const id of ids) {
      const events = await readStream(deps.pool, `workflow-${id}`, { fromVersion: 5 });
      const answer = events.find((event) => event.type === "DialogCompleted");
      const next = events.find((event) => event.type === "StepScheduled");
      if (answer && next) latencies.push(next.recordedAt.getTime() - answer.recordedAt.getTime());
    }
    latencies.sort((a, b) => a - b);
    const completed = await countEvents(deps.pool, "WorkflowCompleted");
    const stats = engine.sticky.stats;
    recordResults(
      `engine-dialogs${sizeOption().replaceAll(" ", "")}`,
      `## Workflow engine: ${fmt(size)} instances waiting on dialogs, then answered

Command: \`npm run bench -- engine-dialogs${sizeOption()}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}

${fmt(size)} instances of \`approval\` (a step, a dialog, a step) started ${CLIENTS} at a time, each
run until it waits at its dialog; then every dialog answered with \`completeDialog\`, ${fmt(rate)}
answers a second (open loop: each sent at its moment; \`--rate\`), the engine (concurrency 8, the default ${fmt(engine.sticky.size)} sticky runs) in
the same process. An answer's latency: from its \`DialogCompleted\` to the next
\`StepScheduled\` (both the database's clock).

| measure | value |
| --- | ---: |
| started and waiting (s; instances/s) | ${fmt(startSeconds, 1)}; ${fmt(size / startSeconds)} |
| answered and completed (s; answers/s) | ${fmt(answerSeconds, 1)}; ${fmt(size / answerSeconds)} |
| completed | ${fmt(completed)} of ${fmt(size)} |
| answer → next step p50 / p99 / max (ms) | ${fmt(percentile(latencies, 50), 0)} / ${fmt(percentile(latencies, 99), 0)} / ${fmt(latencies.at(-1) ?? Number.NaN, 0)} |
| runs kept parked once all waited | ${fmt(kept)} |
| wakes that resumed a parked run / that ran the code from its start (first wakes, runs not kept) | ${fmt(stats.hits)} / ${fmt(stats.misses + stats.stale)} |
| RSS peak (MiB) | ${fmt(peak)} |

RSS of the benchmark's process (engine, commands and client): ${rss.map((r) => `${r.what} ${fmt(r.mib)} MiB`).join("; ")}.
`,
    );
    process.stderr.write(
      `bench: engine-dialogs: ${fmt(completed)}/${fmt(size)} completed; p99 ${fmt(percentile(latencies, 99))} ms; RSS peak ${fmt(peak)} MiB\n`,
    );
  } finally {
    clearInterval(sampler);
    await bench.close();
  }
}

/** `--rate N`: answers a second (default 50). */
function rateOption(): number {
  const index = process.argv.indexOf("--rate");
  const rate = index < 0 ? 50 : Number(process.argv[index + 1]);
  if (!(rate > 0)) throw new Error("--rate: expected answers a second, such as 50");
  return rate;
}

/** Runs `work` `count` times, `CLIENTS` at a time. */
async function inTurns(count: number, work: () => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < count) {
        next++;
        await work();
      }
    }),
  );
}
