import type { Operation } from "rfc6902";
import type { ChangeType } from "../../src/events/index.ts";
import { liveTable } from "../../src/projector/index.ts";

export const CHANGES_PROJECTION = "changes";

/** The live `changes` table, quoted and schema-qualified (never user input). */
export const CHANGES = liveTable(CHANGES_PROJECTION, "changes");

/** A row of `changes`: one add, modify, rename or delete, at its event's log position. */
export interface ChangesRow {
  readonly transaction_id: string;
  readonly position: number;
  readonly event_id: string;
  readonly entry_uuid: string;
  readonly type: string | null;
  readonly dn: string;
  readonly old_dn: string | null;
  readonly change_type: ChangeType;
  readonly occurred_at: Date;
  readonly recorded_at: Date;
  readonly actor: string | null;
  readonly attributes: string[];
  readonly patch: Operation[];
  readonly observed: boolean;
  readonly source: string | null;
  readonly causation_id: string | null;
  readonly correlation_id: string | null;
}

export const changesTables = (table: (name: string) => string): readonly string[] => [
  `CREATE TABLE ${table("changes")} (
     transaction_id xid8 NOT NULL,
     position bigint NOT NULL PRIMARY KEY,
     event_id uuid NOT NULL,
     entry_uuid uuid NOT NULL,
     type text,
     dn text NOT NULL,
     old_dn text,
     change_type text NOT NULL,
     occurred_at timestamptz NOT NULL,
     recorded_at timestamptz NOT NULL,
     actor text,
     attributes text[] NOT NULL,
     patch jsonb NOT NULL,
     observed boolean NOT NULL,
     source text,
     causation_id text,
     correlation_id text)`,
];

/** Indexes only readers use: a replay builds them after applying the log (`Projection.indexes`). */
export const changesIndexes = (table: (name: string) => string): readonly string[] => [
  `CREATE INDEX ON ${table("changes")} (transaction_id, position)`,
  `CREATE INDEX ON ${table("changes")} (entry_uuid, transaction_id, position)`,
  `CREATE INDEX ON ${table("changes")} (occurred_at)`,
  `CREATE INDEX ON ${table("changes")} USING gin (attributes)`,
];
