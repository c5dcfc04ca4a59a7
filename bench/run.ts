/**
 * `npm run bench [-- suite ...]`: runs the benchmark suites (all by default) and records each
 * one's figures in bench/RESULTS.md. Not part of `npm test`.
 */
import { atBenchmark } from "./at.ts";
import { authBenchmark } from "./auth.ts";
import { captureBenchmark } from "./capture.ts";
import { chainBenchmark } from "./chain.ts";
import { demoWorkflowsBenchmark } from "./demo-workflows.ts";
import { directoriesBenchmark } from "./directories.ts";
import { engineDialogsBenchmark } from "./engine-dialogs.ts";
import { engineLongBenchmark, engineStepsBenchmark } from "./engine.ts";
import { extractBenchmark } from "./extract.ts";
import { firstStartBenchmark } from "./first-start.ts";
import { hooksBenchmark } from "./hooks.ts";
import { largeEntryBenchmark } from "./large-entry.ts";
import { logScaleBenchmark } from "./log-scale.ts";
import { memoryBenchmark } from "./memory.ts";
import { oneGroupBenchmark } from "./one-group.ts";
import { graphqlBenchmark } from "./graphql.ts";
import { replayBenchmark } from "./replay.ts";
import { restBenchmark } from "./rest.ts";
import { reviewsBenchmark } from "./reviews.ts";
import { storeBenchmark } from "./store.ts";
import { tailBenchmark } from "./tail.ts";
import { sortPairBenchmark } from "./sort-pair.ts";
import { testingBenchmark } from "./testing.ts";
import { transportBenchmark } from "./transport.ts";
import { webBenchmark } from "./web.ts";
import { workflowApiBenchmark } from "./workflow-api.ts";
import { workflowsBenchmark } from "./workflows.ts";

const suites: Record<string, () => Promise<void>> = {
  store: storeBenchmark,
  replay: replayBenchmark,
  chain: chainBenchmark,
  graphql: graphqlBenchmark,
  at: atBenchmark,
  capture: captureBenchmark,
  directories: directoriesBenchmark,
  "first-start": firstStartBenchmark,
  hooks: hooksBenchmark,
  rest: restBenchmark,
  tail: tailBenchmark,
  workflows: workflowsBenchmark,
  "engine-steps": engineStepsBenchmark,
  "engine-long": engineLongBenchmark,
  "engine-dialogs": engineDialogsBenchmark,
  "workflow-api": workflowApiBenchmark,
  testing: testingBenchmark,
  "demo-workflows": demoWorkflowsBenchmark,
  auth: authBenchmark,
  web: webBenchmark,
  memory: memoryBenchmark,
  "one-group": oneGroupBenchmark,
  "log-scale": logScaleBenchmark,
  extract: extractBenchmark,
  transport: transportBenchmark,
  "sort-pair": sortPairBenchmark,
  reviews: reviewsBenchmark,
  "large-entry": largeEntryBenchmark,
};

// Options (`--size 1m`) are read by the suites themselves (`benchSize`); the rest are suites.
const args = process.argv.slice(2);
const chosen = args.filter(
  (arg, index) => !arg.startsWith("--") && !args[index - 1]?.startsWith("--"),
);
for (const name of chosen) {
  if (!suites[name]) {
    process.stderr.write(`annal: ANNAL_USAGE: unknown benchmark suite "${name}"\n`);
    process.stderr.write(`annal: hint: choose from ${Object.keys(suites).join(", ")}\n`);
    process.exit(1);
  }
}
for (const name of chosen.length > 0 ? chosen : Object.keys(suites)) {
  process.stderr.write(`bench: ${name}\n`);
  await suites[name]!();
}
