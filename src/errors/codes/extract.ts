import type { ErrorCodeSpec } from "./spec.ts";

/** Parquet extracts of the history (`annal extract`, `GET /api/extracts/{table}.parquet`). */
export const EXTRACT_CODES = {
  ANNAL_EXTRACT_TABLE_UNKNOWN: {
    status: 404,
    meaning:
      "The extract named is not one annal writes: events, changes, entry_versions, memberships, workflow_instances or workflow_steps.",
    hint: "ask for one of events, changes, entry_versions, memberships, workflow_instances, workflow_steps",
    surfaces: ["rest"],
  },
  ANNAL_EXTRACT_FOLDER_INVALID: {
    status: 400,
    meaning:
      "The folder given to `annal extract` holds a manifest (`annal-extract.json`) that annal cannot continue from: it is not one annal wrote, or it was written from another database.",
    hint: "extract into an empty folder, or into the one this database's extracts went to",
  },
  ANNAL_EXTRACT_IN_PROGRESS: {
    status: 409,
    meaning:
      "Another `annal extract` is writing into the same folder (its lock file `annal-extract.lock` is there).",
    hint: "wait for it to finish; if none is running (it was killed), remove annal-extract.lock",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
