import type { ErrorCodeSpec } from "./spec.ts";

/** `annal exercise`: the practice tasks of a project's `exercises/`. */
export const EXERCISE_CODES = {
  ANNAL_EXERCISE_ARGUMENT: {
    status: 400,
    meaning: "`annal exercise` was given an option it does not know, or more than one task.",
    hint: "annal exercise [<number>|<name>] [--list]: one task, by its number (3) or name (request-answer)",
  },
  ANNAL_EXERCISE_MISSING: {
    status: 404,
    meaning: "The project has no practice task: no exercises/ directory, or no task folder in it.",
    hint: "run annal exercise in a project made by annal init (its exercises/ holds the tasks)",
  },
  ANNAL_EXERCISE_UNKNOWN: {
    status: 404,
    meaning: "No practice task matches the number or name given to `annal exercise`.",
  },
  ANNAL_EXERCISE_REFERENCE: {
    status: 400,
    meaning: "A practice task's folder has no README.md, or no test file: the task is incomplete.",
    hint: "restore the task's files from a new project (annal init <dir>) and copy your work over",
  },
  ANNAL_EXERCISE_TYPECHECK_UNAVAILABLE: {
    status: 400,
    meaning:
      "`annal exercise` type-checks a task with TypeScript, which the project does not have installed.",
    hint: "npm install --save-dev typescript (annal init's package.json lists it: npm install)",
  },
  ANNAL_EXERCISE_TYPE_ERROR: {
    status: 400,
    meaning:
      "A practice task does not type-check, so its tests do not run; the message names the file and line.",
  },
  ANNAL_EXERCISE_FAILED: {
    status: 400,
    meaning: "A practice task's tests ran and at least one failed: the task is not done yet.",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
