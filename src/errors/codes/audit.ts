import type { ErrorCodeSpec } from "./spec.ts";

/** The tamper-evident log and signed exports (`src/audit/`). */
export const AUDIT_CODES = {
  ANNAL_LOG_TAMPERED: {
    status: 500,
    meaning:
      "`annal log verify` found an event that does not match the log's hash chain: it was changed, removed or inserted after it was chained. The message names the first such event.",
    hint: "restore the log from a backup you trust and compare; the chain head logged before names the last hash that held",
  },
  ANNAL_LOG_POSITION_UNKNOWN: {
    status: 400,
    meaning: "The event position named (`--from`, `--to`) is not in the log's hash chain (yet).",
    hint: "name the position of an event that exists; the chain follows the log within a second or so",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
