import { createHash } from "node:crypto";
import pg from "pg";
import type { Projection } from "../../src/projector/index.ts";
import type { EntryEventType } from "../../src/events/index.ts";
import { VALUE_KEY_LENGTH } from "./tables.ts";

/** Two attributes a type's pages are sorted by, the first then the second (`sort=sn,cn`). */
export interface SortPair {
  /** The entry type (`[[directory.types]] name`). */
  readonly type: string;
  /** The attributes' names as the directory's schema spells them. */
  readonly first: string;
  readonly second: string;
}

/**
 * The sort value of `attribute` on a row of `entries` (`column`, its `attributes`), spelled
 * with the attribute's name as a literal: the expression of a sort pair's index, which a query
 * must spell exactly so for the planner to read that index. It is the value the REST channel
 * sorts by (the first value, lower-cased, cut at `VALUE_KEY_LENGTH` characters, compared
 * byte-wise), the same as `entry_values.value_key` of the value's ordinal 0.
 */
export function sortValueSql(column: string, attribute: string): string {
  return `(left(lower(${column} -> ${pg.escapeLiteral(attribute)}::text ->> 0), ${VALUE_KEY_LENGTH}) COLLATE "C")`;
}

/**
 * The index's name: its type and attributes, with a digest of them so that two pairs never
 * share one (`entries_sort_user_sn_cn_1a2b3c4d`).
 */
export function sortPairIndexName(pair: SortPair): string {
  const digest = createHash("sha256")
    .update(`${pair.type}\0${pair.first}\0${pair.second}`)
    .digest("hex")
    .slice(0, 8);
  const words = `${pair.type}_${pair.first}_${pair.second}`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .slice(0, 36);
  return `entries_sort_${words}_${digest}`;
}

/**
 * The index of a sort pair: by type, both sort values and then the entry, so that the entries
 * of the type sharing one value of the first (a page of `sn eq "Meyer"` sorted by `sn,cn`, or
 * one group of a page sorted by `sn,cn`) are one range of it, in the page's order. Entries
 * without the second attribute are in it too (NULL, after every value).
 *
 * Not partial (`WHERE type = 'user'`), though only one type's entries are read from it: the
 * planner reads the statistics of an index's expressions only from an index that is not
 * partial, and without them it took a group for 1/200 of the table and sorted it.
 */
export function sortPairIndex(table: (name: string) => string, pair: SortPair): string {
  return `CREATE INDEX ${sortPairIndexName(pair)} ON ${table("entries")}
     (type, ${sortValueSql("attributes", pair.first)}, ${sortValueSql("attributes", pair.second)}, entry_uuid)`;
}

/**
 * The `entries` projection with an index for each of `pairs` among its readers' indexes: a
 * first start builds them after its load, a replay after its log, and the projector at start
 * builds one that a database lacks (a pair added to the configuration) in the background.
 * The projection's tables and version are the same: a pair needs no replay.
 */
export function withSortPairs(
  projection: Projection<EntryEventType>,
  pairs: readonly SortPair[],
): Projection<EntryEventType> {
  if (pairs.length === 0) return projection;
  const indexes = projection.indexes;
  return {
    ...projection,
    indexes: (table) => [
      ...(indexes?.(table) ?? []),
      ...pairs.map((pair) => sortPairIndex(table, pair)),
    ],
  };
}
