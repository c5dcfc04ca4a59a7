import type { AttributeMap } from "../../src/events/index.ts";
import { liveTable } from "../../src/projector/index.ts";

export const ENTRY_VERSIONS_PROJECTION = "entry_versions";

/** The live `entry_versions` table, quoted and schema-qualified (never user input). */
export const ENTRY_VERSIONS = liveTable(ENTRY_VERSIONS_PROJECTION, "entry_versions");

/**
 * A row of `entry_versions`: one version of an entry, valid from `valid_from` (when the
 * directory says the change happened) until `valid_to` (null: still valid).
 */
export interface EntryVersionsRow {
  readonly entry_uuid: string;
  readonly version: number;
  readonly valid_from: Date;
  readonly valid_to: Date | null;
  /** This version is the entry's deletion; its attributes are empty. */
  readonly deleted: boolean;
  readonly type: string | null;
  readonly dn: string;
  readonly attributes: AttributeMap;
  readonly operational: AttributeMap;
  readonly position: number;
}

export const entryVersionsTables = (table: (name: string) => string): readonly string[] => [
  `CREATE TABLE ${table("entry_versions")} (
     entry_uuid uuid NOT NULL,
     version bigint NOT NULL,
     valid_from timestamptz NOT NULL,
     valid_to timestamptz,
     deleted boolean NOT NULL,
     type text,
     dn text NOT NULL,
     attributes jsonb NOT NULL,
     operational jsonb NOT NULL,
     position bigint NOT NULL,
     PRIMARY KEY (entry_uuid, version))`,
];

/** Indexes only readers use: a replay builds them after applying the log (`Projection.indexes`). */
export const entryVersionsIndexes = (table: (name: string) => string): readonly string[] => [
  `CREATE INDEX ON ${table("entry_versions")} (entry_uuid, valid_from DESC, version DESC)`,
  // A search at a moment: the versions of a type valid then (`versionsAtSource`), read from
  // the moment on along the versions' ends, each checked for its start.
  `CREATE INDEX ON ${table("entry_versions")}
     (type, (coalesce(valid_to, 'infinity'::timestamptz)), valid_from) WHERE NOT deleted`,
];
