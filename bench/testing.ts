/**
 * `npm run bench -- testing`: what a workflow test costs with `annal/testing`. A test that
 * passes a 30-day deadline (`advanceClock("30d")`), whole (its own database, the engine, the
 * start, the wait, the close) and the deadline's part alone; the baseline, in the same run, is
 * the same test with the dialog answered at once (`completeActivity`) instead of expiring.
 */
import { z } from "zod";
import { defineWorkflow, TimeoutError } from "../src/index.ts";
import { workflowTest } from "../src/testing/index.ts";
import { benchDatabase, fmt, machine, percentile, recordResults } from "./support.ts";

const RUNS = 20;

const review = defineWorkflow({
  name: "review",
  version: 1,
  parameters: z.object({ doc: z.string() }),
  async run(flow, { doc }) {
    try {
      await flow.dialog({
        name: "approve",
        assignees: ["cn=reviewers,ou=groups,dc=example,dc=org"],
        schema: z.object({ ok: z.boolean() }),
        until: "30d",
      });
      return { doc, expired: false };
    } catch (error) {
      if (!(error instanceof TimeoutError)) throw error;
      return { doc, expired: true };
    }
  },
});

const accounts = { rita: {}, olga: { principals: ["cn=reviewers,ou=groups,dc=example,dc=org"] } };

/** One test: milliseconds of the whole test and of its ending (the deadline or the answer). */
async function oneTest(ending: "deadline" | "answer"): Promise<{ whole: number; end: number }> {
  const started = performance.now();
  const wt = await workflowTest({ workflows: [review], accounts });
  let end: number;
  try {
    const flow = await wt.start({ doc: "spec" }, { as: "rita" });
    await flow.waitFor("WAITING");
    const ending0 = performance.now();
    if (ending === "deadline") await wt.advanceClock("30d");
    else await flow.completeActivity("approve", { ok: true }, { as: "olga" });
    const done = await flow.waitFor("COMPLETED");
    end = performance.now() - ending0;
    if ((done.result as { expired: boolean }).expired !== (ending === "deadline")) {
      throw new Error(`the ${ending} test ended ${JSON.stringify(done.result)}`);
    }
  } finally {
    await wt.close();
  }
  return { whole: performance.now() - started, end };
}

export async function testingBenchmark(): Promise<void> {
  // The driver makes each test's database on this server, as it does on DATABASE_URL's.
  const db = await benchDatabase();
  const previous = process.env.DATABASE_URL;
  process.env.DATABASE_URL = db.url;
  try {
    await oneTest("deadline");
    await oneTest("answer");
    const deadline = { whole: [] as number[], end: [] as number[] };
    const answer = { whole: [] as number[], end: [] as number[] };
    for (let i = 0; i < RUNS; i++) {
      const d = await oneTest("deadline");
      deadline.whole.push(d.whole);
      deadline.end.push(d.end);
      const a = await oneTest("answer");
      answer.whole.push(a.whole);
      answer.end.push(a.end);
    }
    for (const list of [deadline.whole, deadline.end, answer.whole, answer.end]) {
      list.sort((a, b) => a - b);
    }
    const p = (list: number[], q: number) => fmt(percentile(list, q), 0);
    const ratio = (a: number[], b: number[]) => fmt(percentile(a, 50) / percentile(b, 50), 2);
    recordResults(
      "testing",
      `## Workflow tests (annal/testing)

Command: \`npm run bench -- testing\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}

${RUNS} tests of each kind, one after another. Each test makes its own database (on the
benchmark's PostgreSQL server, as on \`DATABASE_URL\`'s), runs the engine, starts an instance
that waits in a dialog with \`until: "30d"\`, and ends it: by passing the 30 days on the test
database's clock (\`advanceClock("30d")\`), or, the baseline, by answering the dialog at once.

| measure | 30-day deadline, p50 / p99 (ms) | answer at once, p50 / p99 (ms) | ratio (p50) |
| --- | ---: | ---: | ---: |
| the ending: \`advanceClock\` or \`completeActivity\` → COMPLETED | ${p(deadline.end, 50)} / ${p(deadline.end, 99)} | ${p(answer.end, 50)} / ${p(answer.end, 99)} | ${ratio(deadline.end, answer.end)} |
| the whole test, database made and dropped | ${p(deadline.whole, 50)} / ${p(deadline.whole, 99)} | ${p(answer.whole, 50)} / ${p(answer.whole, 99)} | ${ratio(deadline.whole, answer.whole)} |
`,
    );
    process.stderr.write(
      `bench: testing: 30 days pass in ${p(deadline.end, 50)} ms (an answer: ${p(answer.end, 50)} ms); the whole test ${p(deadline.whole, 50)} ms\n`,
    );
  } finally {
    if (previous === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = previous;
    await db.close();
  }
}
