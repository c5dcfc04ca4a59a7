/**
 * The workflow test driver, `annal/testing`: run a workflow against the real engine and a real
 * PostgreSQL (a database of the test's own), with fixtures for its bindings and a clock the
 * test moves. Works under any test runner (tap, node:test). See `docs/testing-workflows.md`.
 */
export {
  fixture,
  workflowTest,
  WorkflowTest,
  type Fixture,
  type TestAccount,
  type WorkflowTestOptions,
} from "./driver.ts";
export { TestInstance, type Expectation } from "./instance.ts";
/** What `waitFor` and `state()` return: the instance as its events fold. */
export type { InstanceState } from "../workflow/index.ts";
export { WorkflowTestError, type WorkflowTestCode } from "./errors.ts";
export { createDatabaseOn, type TestDatabase } from "./database.ts";
