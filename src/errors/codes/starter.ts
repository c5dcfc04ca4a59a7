import type { ErrorCodeSpec } from "./spec.ts";

/** The starter: `annal init`, `annal test` (and the project they make). */
export const STARTER_CODES = {
  ANNAL_INIT_DIRECTORY_NOT_EMPTY: {
    status: 400,
    meaning:
      "`annal init` was given a directory that already holds files; it writes only into an empty one.",
    hint: "name a new directory (annal init <dir> creates it) or empty this one",
  },
  ANNAL_INIT_PACK_FAILED: {
    status: 500,
    meaning:
      "`annal init`, run from a checkout of annal, could not pack it (`npm pack`) into the new project's `vendor/`: annal is not on a registry, so the project installs it from that tarball.",
    hint: "run npm install in the checkout first (npm pack builds annal's JavaScript with its TypeScript), or pack it yourself and pass --annal file:<the tarball>",
  },
  ANNAL_NO_TESTS_SELECTED: {
    status: 400,
    meaning: "`annal test` found no test file under tests/ (that matches its pattern).",
    hint: "tests are tests/**/*.test.ts; the pattern matches part of a file's path, or a glob",
  },
  ANNAL_TESTS_FAILED: {
    status: 400,
    meaning: "`annal test` ran the project's workflow tests and at least one failed.",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
