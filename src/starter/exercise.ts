import path from "node:path";
import { AnnalError, isAnnalError } from "../errors/index.ts";
import { ExerciseProgress, listExercises, selectExercise, type Exercise } from "./exercises.ts";
import { runProjectTests } from "./run-tests.ts";
import { typecheckFiles } from "./typecheck.ts";

export interface ExerciseOptions {
  /** The project's directory (its `exercises/`). */
  readonly cwd: string;
  /** A task's number or name; without one, the first task not passing yet. */
  readonly selector?: string;
  readonly out: (line: string) => void;
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * `annal exercise [n|name]`: type-checks a practice task (its file to complete and its tests)
 * and, when that passes, runs its tests as `annal test` runs a project's. Without a selector it
 * takes the first task whose files have not passed as they are now (`exercises/progress.json`
 * records each pass); when every task has, it lists them and says so. Returns the task run,
 * or undefined when none was left.
 *
 * @throws AnnalError `ANNAL_EXERCISE_MISSING`, `ANNAL_EXERCISE_UNKNOWN`,
 *   `ANNAL_EXERCISE_REFERENCE`, `ANNAL_EXERCISE_TYPECHECK_UNAVAILABLE`,
 *   `ANNAL_EXERCISE_TYPE_ERROR` (naming file:line), `ANNAL_EXERCISE_FAILED`.
 */
export async function runExercise(options: ExerciseOptions): Promise<Exercise | undefined> {
  const exercises = await listExercises(options.cwd);
  const progress = new ExerciseProgress(options.cwd);
  let exercise: Exercise | undefined;
  if (options.selector !== undefined) {
    exercise = selectExercise(exercises, options.selector);
  } else {
    for (const each of exercises) {
      if (!(await progress.passed(each))) {
        exercise = each;
        break;
      }
    }
    if (!exercise) {
      await listProgress(options.cwd, exercises, options.out);
      options.out(`annal exercise: all ${exercises.length} tasks pass`);
      return undefined;
    }
  }
  const { number, name, dir } = exercise;
  const readme = path.join(dir, "README.md");
  options.out(`annal exercise ${number}: ${name} (${dir}; what to do: ${readme})`);

  const problems = typecheckFiles(options.cwd, exercise.sources);
  for (const problem of problems) options.out(`${problem.at} ${problem.message}`);
  if (problems.length > 0) {
    const [first] = problems;
    throw new AnnalError(
      "ANNAL_EXERCISE_TYPE_ERROR",
      `task ${number} (${name}) does not type-check, so its tests do not run: ${first!.at} ${first!.message}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ""}`,
      { hint: `fix the file at ${first!.at}, then run annal exercise ${number} again` },
    );
  }
  options.out(`type-check: ok (${exercise.sources.length} files)`);

  try {
    await runProjectTests({
      cwd: options.cwd,
      files: exercise.tests,
      label: `annal exercise ${number}`,
      out: options.out,
      ...(options.env ? { env: options.env } : {}),
    });
  } catch (error) {
    if (!isAnnalError(error) || error.code !== "ANNAL_TESTS_FAILED") throw error;
    throw new AnnalError(
      "ANNAL_EXERCISE_FAILED",
      `task ${number} (${name}) is not done yet: ${error.message}`,
      { hint: `${readme} says what to do, with hints; then run annal exercise ${number} again` },
    );
  }
  await progress.recordPassed(exercise);
  const next = exercises[exercises.indexOf(exercise) + 1];
  options.out(
    next
      ? `task ${number} passes; next: annal exercise ${next.number} (${next.name})`
      : `task ${number} passes: that was the last one`,
  );
  return exercise;
}

/** `annal exercise --list`: every task, and whether it passed as its files are now. */
export async function listProgress(
  cwd: string,
  exercises?: readonly Exercise[],
  out: (line: string) => void = () => {},
): Promise<void> {
  const tasks = exercises ?? (await listExercises(cwd));
  const progress = new ExerciseProgress(cwd);
  for (const exercise of tasks) {
    const state = (await progress.passed(exercise)) ? "passes" : "to do";
    out(`${String(exercise.number).padStart(2)}  ${exercise.name.padEnd(24)} ${state}`);
  }
}
