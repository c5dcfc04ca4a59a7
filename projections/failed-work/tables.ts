import type { ChangeEventAbandoned } from "../../src/events/index.ts";
import { liveTable } from "../../src/projector/index.ts";

export const FAILED_WORK_PROJECTION = "failed_work";

/** The live `failed_work` table, quoted and schema-qualified (never user input). */
export const FAILED_WORK = liveTable(FAILED_WORK_PROJECTION, "failed_work");

export const FAILED_WORK_STATES = ["failed", "retrying", "resolved"] as const;
export type FailedWorkState = (typeof FAILED_WORK_STATES)[number];

/** A row of `failed_work`: one change event whose processing failed for good. */
export interface FailedWorkRow {
  /** The id of its `ChangeEventReceived` event. */
  readonly id: string;
  readonly hook: string;
  readonly webhook: string;
  readonly source: string;
  readonly event_id: string;
  readonly type: string;
  readonly subject: string;
  readonly state: FailedWorkState;
  readonly attempts: number;
  readonly reason: ChangeEventAbandoned["reason"];
  readonly last_error_code: string | null;
  readonly last_error: string;
  readonly failed_at: Date;
  readonly retries: number;
  readonly retried_at: Date | null;
  readonly resolved_at: Date | null;
  readonly position: number;
}

export const failedWorkTables = (table: (name: string) => string): readonly string[] => [
  `CREATE TABLE ${table("failed_work")} (
     id uuid PRIMARY KEY,
     hook text NOT NULL,
     webhook text NOT NULL,
     source text NOT NULL,
     event_id text NOT NULL,
     type text NOT NULL,
     subject text NOT NULL,
     state text NOT NULL CHECK (state IN ('failed', 'retrying', 'resolved')),
     attempts integer NOT NULL,
     reason text NOT NULL,
     last_error_code text,
     last_error text NOT NULL,
     failed_at timestamptz NOT NULL,
     retries integer NOT NULL DEFAULT 0,
     retried_at timestamptz,
     resolved_at timestamptz,
     position bigint NOT NULL)`,
  `CREATE INDEX ON ${table("failed_work")} (state, failed_at DESC)`,
  `CREATE INDEX ON ${table("failed_work")} (source, event_id)`,
];
