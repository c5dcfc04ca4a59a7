import type { AttributeMap } from "../../src/events/index.ts";
import { LARGE_TABLE_STORAGE } from "../vacuum.ts";
import { liveTable } from "../../src/projector/index.ts";

export const ENTRIES_PROJECTION = "entries";

/** The live `entries` table, quoted and schema-qualified (never user input). */
export const ENTRIES = liveTable(ENTRIES_PROJECTION, "entries");

/** The live `entry_values` table: the entries' values, case-folded, for indexed searches. */
export const ENTRY_VALUES = liveTable(ENTRIES_PROJECTION, "entry_values");

/** The live `entry_value_counts` table: how many entries of a type have an attribute. */
export const ENTRY_VALUE_COUNTS = liveTable(ENTRIES_PROJECTION, "entry_value_counts");

/**
 * How many characters of a folded value its key holds. Keys are what the btree indexes and
 * what sorting compares (the REST channel's sort values are cut at the same length), so a
 * cursor stays short and no index row outgrows a page.
 */
export const VALUE_KEY_LENGTH = 200;

/**
 * The attribute name of the one row every typed entry has in `entry_values` (no attribute is
 * named by the empty string): counting them counts a type's entries.
 */
export const ENTRY_ROW_ATTRIBUTE = "";

/**
 * The parent of a normalised DN (`dn_norm`) in SQL: what follows its first RDN, which ends at
 * the first comma not escaped by a backslash; NULL for a DN of one RDN. The expression of the
 * index `entries_parent`, which serves `hasSubordinates` and one-level scopes: a query must
 * spell it exactly so (`parentDnSql("e.dn_norm")`) for the index to serve it.
 */
export const parentDnSql = (column: string): string =>
  `substring(${column} from '^(?:[^,\\\\]|\\\\.)*,(.*)$')`;

/** A row of `entries`: one entry as it is now. */
export interface EntriesRow {
  readonly entry_uuid: string;
  /** The configured type it belongs to; null for none. */
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
  /**
   * The log position of the event that made the entry (its add, or its first snapshot): the
   * order entries were created in, which is the order a directory such as OpenLDAP's back-mdb
   * returns them in (by entry id), kept through renames and moves as the directory keeps it.
   */
  readonly created_position: number;
  readonly position: number;
  readonly transaction_id: string;
}

/**
 * `entry_values` is the directory server's attribute index: one row per value of every
 * attribute (user and operational) of every entry that has a type, as `lower(value)` (the
 * fold the filters compare with), and one row named `ENTRY_ROW_ATTRIBUTE` per entry.
 *
 * - `value_key`: the folded value's first `VALUE_KEY_LENGTH` characters, `COLLATE "C"`
 *   (code-point order, the order filters and sorting use); `value_folded`: the whole folded
 *   value when it is longer than that, otherwise NULL.
 * - `entry_values_match` (type, attribute, key, entry) serves equality, presence, ordering
 *   and prefix filters, and walks ascending sorts (`ordinal` 0 is the first value, the sort
 *   key); `entry_values_order_desc` walks descending ones; `entry_values_later` (the values
 *   after an entry's first) says at once whether a match of a comparison on the sort key may
 *   lie outside that comparison's range of the key's index; `entry_values_trigram` (pg_trgm)
 *   serves substring filters.
 * - `entry_value_counts`: per type and attribute, how many entries have a first value
 *   (`ENTRY_ROW_ATTRIBUTE`: how many entries), so a sorted page knows without a scan whether
 *   entries without the sort attribute exist.
 */
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
     created_position bigint NOT NULL,
     position bigint NOT NULL,
     transaction_id xid8 NOT NULL) ${LARGE_TABLE_STORAGE}`,
  `CREATE TABLE ${table("entry_values")} (
     entry_uuid uuid NOT NULL,
     type text NOT NULL,
     attribute text NOT NULL,
     ordinal integer NOT NULL,
     value_key text COLLATE "C" NOT NULL,
     value_folded text COLLATE "C",
     PRIMARY KEY (entry_uuid, attribute, ordinal)) ${LARGE_TABLE_STORAGE}`,
  // The planner otherwise multiplies the selectivities of attribute and value as if they were
  // independent, and misjudges how many entries `title = engineer` matches.
  `CREATE STATISTICS ${table("entry_values_attribute_key")} ON attribute, value_key FROM ${table("entry_values")}`,
  `CREATE TABLE ${table("entry_value_counts")} (
     type text NOT NULL,
     attribute text NOT NULL,
     entries bigint NOT NULL,
     PRIMARY KEY (type, attribute))`,
];

/**
 * Indexes only readers use: a replay builds them after applying the log, a first start after
 * its load (`Projection.indexes`). Each is named (as PostgreSQL named the unnamed ones before),
 * so that one missing is found by name. Listed in the order a first start builds them while the
 * REST channel serves (`buildReaderIndexes`): lookups by DN and the filters' value index
 * first (without them a search reads every value), then the scopes and sorted pages, and the
 * trigram index of substring filters, the dearest to build, last.
 */
export const entriesIndexes = (table: (name: string) => string): readonly string[] => [
  `CREATE INDEX entries_dn_norm_idx ON ${table("entries")} (dn_norm)`,
  `CREATE INDEX entry_values_match ON ${table("entry_values")}
     (type, attribute, value_key, entry_uuid) INCLUDE (ordinal)`,
  `CREATE INDEX entries_type_entry_uuid_idx ON ${table("entries")} (type, entry_uuid)`,
  `CREATE INDEX entries_parent ON ${table("entries")} ((${parentDnSql("dn_norm")}), dn_norm)`,
  `CREATE INDEX entries_type_dn ON ${table("entries")} (type, dn_norm COLLATE "C", entry_uuid)`,
  `CREATE INDEX entries_created_position_idx ON ${table("entries")} (created_position)`,
  `CREATE INDEX entry_values_order_desc ON ${table("entry_values")}
     (type, attribute, value_key DESC, entry_uuid) WHERE ordinal = 0`,
  `CREATE INDEX entry_values_later ON ${table("entry_values")}
     (type, attribute, value_key) WHERE ordinal > 0`,
  `CREATE INDEX entries_attributes_idx ON ${table("entries")} USING gin (attributes jsonb_path_ops)`,
  `CREATE INDEX entry_values_trigram ON ${table("entry_values")}
     USING gin ((coalesce(value_folded, value_key)) gin_trgm_ops)`,
];
