/**
 * The starter: what the people who write workflows use in a project of their own.
 * `annal init` writes the project from the template (`starter/` at the package's top),
 * `annal test` runs its workflow tests, `annal exercise` its practice tasks.
 */
export {
  FROM_DEMO,
  initProject,
  projectManifest,
  STARTER_FILES,
  TEMPLATE_DIR,
  type InitOptions,
} from "./init.ts";
export {
  describeFailure,
  runProjectTests,
  selectTestFiles,
  type RunTestsOptions,
  type TestSummary,
} from "./run-tests.ts";
export { listProgress, runExercise, type ExerciseOptions } from "./exercise.ts";
export { listExercises, selectExercise, type Exercise } from "./exercises.ts";

export { signInThroughPage, type SignedIn } from "./sign-in.ts";
export {
  NEWCOMER,
  SCENARIOS,
  scenarioNamed,
  type Scenario,
  type ScenarioInput,
} from "./scenarios.ts";
