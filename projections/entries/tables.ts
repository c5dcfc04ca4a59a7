import type { AttributeMap } from "../../src/events/index.ts";
import { liveTable } from "../../src/projector/index.ts";

export const ENTRIES_PROJECTION = "entries";

/** The live `entries` table, quoted and schema-qualified (never user input). */
export const ENTRIES = liveTable(ENTRIES_PROJECTION, "entries");

/** A row of `entries`: one entry as it is now. */
export interface EntriesRow {
  readonly entry_uuid: string;
  /** The configured type the entry belongs to; null for none. */
  readonly type: string | null;
  readonly dn: string;
  readonly dn_norm: string;
  /** User attributes: name → values, binary values base64. */
  readonly attributes: AttributeMap;
  readonly operational: AttributeMap;
  readonly created_at: Date;
  readonly modified_at: Date;
  /** The entry stream's version this row is. */
  readonly version: number;
  readonly position: number;
  readonly transaction_id: string;
}

export const entriesTables = (table: (name: string) => string): readonly string[] => [
  `CREATE TABLE ${table("entries")} (
     entry_uuid uuid PRIMARY KEY,
     type text,
     dn text NOT NULL,
     dn_norm text NOT NULL,
     attributes jsonb NOT NULL,
     operational jsonb NOT NULL,
     created_at timestamptz NOT NULL,
     modified_at timestamptz NOT NULL,
     version bigint NOT NULL,
     position bigint NOT NULL,
     transaction_id xid8 NOT NULL)`,
  `CREATE INDEX ON ${table("entries")} (type, entry_uuid)`,
  `CREATE INDEX ON ${table("entries")} (dn_norm)`,
  `CREATE INDEX ON ${table("entries")} USING gin (attributes jsonb_path_ops)`,
];
