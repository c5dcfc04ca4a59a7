/**
 * `npm run bench -- demo-workflows`: how long the demo workflows' tests take with the test
 * driver (test/demo/workflows/*.test.ts: every path of access-request, leaver and joiner, the
 * 3-, 7-, 14- and 30-day deadlines included), run by tap as `npm test` runs them. The baseline,
 * in the same run on the same server, is the driver's fixed cost: as many empty workflow tests
 * (database made, engine started, closed) one after another.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { z } from "zod";
import { defineWorkflow } from "../src/index.ts";
import { workflowTest } from "../src/testing/index.ts";
import { benchDatabase, fmt, machine, percentile, recordResults } from "./support.ts";

const RUNS = 3;
const REPO = path.resolve(import.meta.dirname, "..");
const FILES = ["access-request", "leaver", "joiner"].map((f) => `test/demo/workflows/${f}.test.ts`);

const nothing = defineWorkflow({
  name: "nothing",
  version: 1,
  parameters: z.object({}),
  async run() {
    return null;
  },
});

/** One run of the suite through the test runner: seconds, and the tests it ran. */
async function suiteRun(url: string): Promise<{ seconds: number; tests: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, ["test/support/run-suite.ts", ...FILES], {
    cwd: REPO,
    env: { ...process.env, DATABASE_URL: url },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`the demo workflows' tests failed (exit ${code})`);
  // tap's results: one "ok N - <name>" line per top-level test.
  const tests = FILES.map(
    (file) =>
      readFileSync(path.join(REPO, ".tap/test-results", `${file}.tap`), "utf8").match(
        /^ok \d+ - /gm,
      )?.length ?? 0,
  ).reduce((a, b) => a + b, 0);
  return { seconds, tests };
}

export async function demoWorkflowsBenchmark(): Promise<void> {
  const db = await benchDatabase();
  const previous = process.env.DATABASE_URL;
  process.env.DATABASE_URL = db.url;
  try {
    const runs: number[] = [];
    let tests = 0;
    for (let i = 0; i < RUNS; i++) {
      const run = await suiteRun(db.url);
      runs.push(run.seconds);
      tests = run.tests;
    }
    runs.sort((a, b) => a - b);
    const empty: number[] = [];
    for (let i = 0; i < tests; i++) {
      const started = performance.now();
      const wt = await workflowTest({ workflows: [nothing] });
      await (await wt.start({}, { as: "someone" })).waitFor("COMPLETED");
      await wt.close();
      empty.push((performance.now() - started) / 1000);
    }
    const baseline = empty.reduce((a, b) => a + b, 0);
    const load = os
      .loadavg()
      .map((n) => fmt(n, 1))
      .join(", ");
    const median = percentile(runs, 50);
    recordResults(
      "demo-workflows",
      `## The demo workflows' tests (annal/testing)

Command: \`npm run bench -- demo-workflows\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}

\`npm test -- test/demo/workflows/*.test.ts\` (tap, two files at a time), ${RUNS} runs: ${tests}
tests over the demo organisation, every path of the access request, the leaver and the joiner,
their 3-, 7-, 14- and 30-day deadlines passed on each test database's clock. Each test makes its
own database. The baseline: ${tests} empty workflow tests one after another (database made,
engine started, an instance run, closed), the driver's fixed cost.

| measure | seconds |
| --- | ---: |
| the suite, wall clock (min / median / max of ${RUNS}) | ${fmt(runs[0]!, 1)} / ${fmt(median, 1)} / ${fmt(runs.at(-1)!, 1)} |
| baseline: ${tests} empty tests, one after another | ${fmt(baseline, 1)} |
| ratio (suite median / baseline) | ${fmt(median / baseline, 2)} |

Load average when it ran: ${load} (${os.cpus().length} cores, shared with other work). The
baseline is the share of the suite that is the driver's own (each test's database and engine),
whatever the workflows do.
`,
    );
    process.stderr.write(
      `bench: demo-workflows: ${tests} tests in ${fmt(median, 1)} s (median of ${RUNS}); ${tests} empty tests ${fmt(baseline, 1)} s\n`,
    );
  } finally {
    if (previous === undefined) delete process.env.DATABASE_URL;
    else process.env.DATABASE_URL = previous;
    await db.close();
  }
}
