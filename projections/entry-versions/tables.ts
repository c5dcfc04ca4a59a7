import type { AttributeMap } from "../../src/events/index.ts";
import { LARGE_TABLE_STORAGE } from "../vacuum.ts";
import { liveTable } from "../../src/projector/index.ts";

export const ENTRY_VERSIONS_PROJECTION = "entry_versions";

/** The live `entry_versions` table, quoted and schema-qualified (never user input). */
export const ENTRY_VERSIONS = liveTable(ENTRY_VERSIONS_PROJECTION, "entry_versions");

/**
 * The live `entry_version_values` table: the value index of the versions, as `entry_values`
 * is the entries' (docs/history-index.md).
 */
export const ENTRY_VERSION_VALUES = liveTable(ENTRY_VERSIONS_PROJECTION, "entry_version_values");

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
  /**
   * The position of the entry's first version (its add, or its first snapshot), the same on
   * every version: the order the directory returns entries in, as `entries` keeps it.
   */
  readonly created_position: number;
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
     created_position bigint NOT NULL,
     PRIMARY KEY (entry_uuid, version)) ${LARGE_TABLE_STORAGE}`,
  // One row per span of a value of a typed entry: from the version that brought it to the
  // version that took it away (null: still held), folded as `entry_values` folds them (the
  // same key length), so the filters at a moment or over a period read value ranges here
  // instead of every version's JSON, and a value held unchanged over many versions is one row
  // (docs/history-index.md). The open spans' index serves `apply`, which ends and continues
  // the spans an entry's open version left open; a replay needs it as it goes.
  `CREATE TABLE ${table("entry_version_values")} (
     entry_uuid uuid NOT NULL,
     type text NOT NULL,
     attribute text NOT NULL,
     value_key text COLLATE "C" NOT NULL,
     value_folded text COLLATE "C",
     valid_from timestamptz NOT NULL,
     valid_to timestamptz) ${LARGE_TABLE_STORAGE}`,
  // A search at a moment reads the scope from the DN folded (`versionsAt`'s `dn_norm`): without
  // statistics of it PostgreSQL guesses that a base holds half a percent of the versions.
  `CREATE STATISTICS ${table("entry_versions_dn_norm")} ON (lower(dn)) FROM ${table("entry_versions")}`,
  `CREATE INDEX entry_version_values_open ON ${table("entry_version_values")} (entry_uuid)
     WHERE valid_to IS NULL`,
  // As for `entry_values`: attribute and value are far from independent.
  `CREATE STATISTICS ${table("entry_version_values_attribute_key")} ON attribute, value_key FROM ${table("entry_version_values")}`,
];

/**
 * Indexes only readers use: a replay builds them after applying the log, a first start after
 * its load (`Projection.indexes`). Each is named (as PostgreSQL named the unnamed ones before),
 * so that one missing is found by name.
 */
export const entryVersionsIndexes = (table: (name: string) => string): readonly string[] => [
  `CREATE INDEX entry_versions_entry_uuid_valid_from_version_idx
     ON ${table("entry_versions")} (entry_uuid, valid_from DESC, version DESC)`,
  // A search at a moment: the versions of a type valid then (`versionsAt`), read from
  // the moment on along the versions' ends, each checked for its start.
  `CREATE INDEX entry_versions_type_coalesce_valid_from_idx ON ${table("entry_versions")}
     (type, (coalesce(valid_to, 'infinity'::timestamptz)), valid_from) WHERE NOT deleted`,
  // A page of a search at a moment across types (GraphQL's `@at`), in the directory's order:
  // walked in creation order, each version's validity checked in the index (only the versions
  // valid then are fetched), it stops with the page as the entries' search does.
  `CREATE INDEX entry_versions_created ON ${table("entry_versions")}
     (created_position, entry_uuid, valid_from, (coalesce(valid_to, 'infinity'::timestamptz)))
     WHERE NOT deleted`,
  // A filter at a moment (or over a period): an equality is one range of (type, attribute,
  // key), its spans in entry order, each one's validity checked in the index (an index-only
  // scan: the bounds are columns of it), so a page of a search at a moment in entryUUID order
  // reads about the page's spans, and a conjunction merges its terms' ranges; prefix and
  // ordering filters read the key range with the same checks.
  `CREATE INDEX entry_version_values_match ON ${table("entry_version_values")}
     (type, attribute, value_key, entry_uuid) INCLUDE (valid_from, valid_to)`,
  // A filter over a period, negated: whether one version held a value (by entry and time).
  `CREATE INDEX entry_version_values_entry_uuid_attribute_valid_from_idx
     ON ${table("entry_version_values")} (entry_uuid, attribute, valid_from)`,
  `CREATE INDEX entry_version_values_trigram ON ${table("entry_version_values")}
     USING gin ((coalesce(value_folded, value_key)) gin_trgm_ops)`,
];
