/**
 * A workflow engine in a process of its own, for tests that kill it: `node
 * test/support/engine-process.ts <database url> <definitions dir>`. It prints `ready` once its
 * engine runs, and runs until it is killed.
 */
import { createPool } from "../../src/db/index.ts";
import { startJobs } from "../../src/jobs/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { deployDefinitions, startWorkflowEngine } from "../../src/workflow/index.ts";

const [url, dir] = process.argv.slice(2);
const silent = { info() {}, warn() {}, error() {} };
const pool = createPool(url!, 10);
const store = await EventStore.open(pool);
const jobs = await startJobs({ pool, log: silent });
const definitions = await deployDefinitions({ pool, store, dir, log: silent });
await startWorkflowEngine({
  pool,
  store,
  jobs,
  definitions,
  bindings: { pool, log: silent },
  log: silent,
  timerIntervalMs: 100,
});
process.stdout.write("ready\n");
