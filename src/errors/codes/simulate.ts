import type { ErrorCodeSpec } from "./spec.ts";

/** `annal simulate` and its GraphQL operation: what would a definition or an access policy have done. */
export const SIMULATE_CODES = {
  ANNAL_SIMULATE_FILE_INVALID: {
    status: 400,
    meaning:
      "The file to simulate cannot be used: it is not there, it does not bundle, its default export is not a workflow definition, or (`simulate access`) it is not an Access Configuration (TOML with `[authorization.grants]`). The message says which.",
    hint: "simulate the file annal would deploy: a definition exporting defineWorkflow(...) by default, or an annal.toml-style [authorization.grants] table",
  },
  ANNAL_SIMULATE_PERIOD_INVALID: {
    status: 400,
    meaning:
      "The period to simulate is not one: `--from` or `--to` (or `--at`) is not a moment, one is missing, or `--to` lies before `--from`.",
    hint: "write moments as everywhere in annal: 2026-11-20T10:00:00Z, now-7d, yesterday; --to after --from",
  },
  ANNAL_SIMULATE_POLICY_INVALID: {
    status: 400,
    meaning:
      "`--dialogs` (or `--fallback`) names no policy: dialogs are answered `approve`, `deny` or `as-answered`; the fallback of `as-answered` is `approve`, `deny` or `unanswered`.",
  },
  ANNAL_SIMULATE_SCRATCH_UNAVAILABLE: {
    status: 503,
    meaning:
      "The simulation's scratch database could not be made beside annal's own: the simulation runs there so that nothing reaches the live log, and annal's role may not create databases.",
    hint: "run the simulation with a database role that may CREATE DATABASE (the embedded PostgreSQL's may)",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
