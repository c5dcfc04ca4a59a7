import type { Queryable } from "../../db/index.ts";
import type { AttributeMap } from "../../events/index.ts";
import { ENTRY_ROW_ATTRIBUTE, ENTRY_VALUE_COUNTS } from "../../../projections/entries/index.ts";
import type { KeysetPosition, SearchSql } from "./sql.ts";

/** A row of a search: the entry's parts and its order columns. */
export interface SearchRow {
  readonly entry_uuid: string;
  readonly dn: string;
  readonly modified_at: Date;
  readonly attributes: AttributeMap | null;
  readonly operational: AttributeMap | null;
  readonly [column: string]: unknown;
}

export interface SearchPageRequest {
  readonly direction: "forward" | "backward";
  readonly limit: number;
  /** Start after (forward) or before (backward) this row. */
  readonly position?: KeysetPosition;
  /** Walk the first sort key's index only above this many matches (default `WALK_ABOVE`). */
  readonly walkAbove?: number;
}

/**
 * A filtered search sorted by an attribute sorts its matches when there are at most this many,
 * and walks the attribute's index otherwise. Walking finds a page after about
 * `limit × entries / matches` keys: quick for a filter that matches much, but every key of the
 * type for one that matches little or nothing (`sn eq "Meyer"` sorted by `sn` over 100,000
 * people took 1.6 s); sorting costs about the matches. Counting up to the bound is one index
 * probe of the filter. A filter that narrows the walked attribute itself is always sorted
 * (`SearchSql.clustered`): however many it matches, a walk would read every key before them.
 */
export const WALK_ABOVE = 2000;

type Side = "after" | "before";

/**
 * Up to `limit` rows of `source` (a query with the search's columns) strictly beyond
 * `position` in `direction`, in that direction's order.
 */
async function readRows(
  db: Queryable,
  sql: SearchSql,
  source: string,
  direction: "forward" | "backward",
  limit: number,
  position: KeysetPosition | undefined,
  keyed = false,
): Promise<SearchRow[]> {
  const side: Side = direction === "forward" ? "after" : "before";
  const params = [...sql.params];
  const keyset = position
    ? `WHERE ${sql.leadingBound(position, side, params, keyed)} AND ${sql.keyset(position, side, params)}`
    : "";
  params.push(limit);
  const result = await db.query<SearchRow>(
    `SELECT * FROM (${source}) AS q ${keyset}
      ORDER BY ${sql.orderBy(direction, keyed)} LIMIT $${params.length}`,
    params,
  );
  return result.rows;
}

/** Whether some entries of the type have no first value of the walked attribute. */
async function someUnkeyed(db: Queryable, sql: SearchSql): Promise<boolean> {
  const type = sql.params[0];
  const attribute = sql.params[Number(sql.walk!.attributeParam.slice(1)) - 1];
  const result = await db.query<{ some: boolean }>(
    `SELECT coalesce((SELECT entries FROM ${ENTRY_VALUE_COUNTS} WHERE type = $1 AND attribute = $2), 0)
          > coalesce((SELECT entries FROM ${ENTRY_VALUE_COUNTS} WHERE type = $1 AND attribute = $3), 0)
            AS some`,
    [type, ENTRY_ROW_ATTRIBUTE, attribute],
  );
  return result.rows[0]?.some ?? false;
}

/** Whether a page walks the first sort key's index (see `WALK_ABOVE`). */
async function walks(db: Queryable, sql: SearchSql, walkAbove: number): Promise<boolean> {
  if (!sql.walk || sql.clustered) return false;
  if (!sql.filtered) return true;
  if (!Number.isFinite(walkAbove)) return false;
  const params = [...sql.params.slice(0, sql.whereParams), walkAbove + 1];
  const result = await db.query<{ matches: number }>(
    `SELECT count(*)::int AS matches
       FROM (SELECT 1 FROM ${sql.source} WHERE ${sql.where} LIMIT $${params.length}) AS m`,
    params,
  );
  return (result.rows[0]?.matches ?? 0) > walkAbove;
}

/**
 * Rows beyond `position` in `direction`, at most `limit`. A walk (`walks`) reads the first sort
 * key's index in key order and stops after `limit` matches: the entries with a value first
 * (forward), then, only if the page is not full yet and some entry lacks the attribute, those
 * without (NULLs sort last either way). Otherwise the matches are sorted.
 */
async function rowsBeyond(
  db: Queryable,
  sql: SearchSql,
  walk: boolean,
  direction: "forward" | "backward",
  limit: number,
  position: KeysetPosition | undefined,
): Promise<SearchRow[]> {
  if (!walk) return readRows(db, sql, sql.inner, direction, limit, position);
  const keyed = () => sql.walkSource("keyed");
  const unkeyed = () => sql.walkSource("unkeyed");
  const atNull = position !== undefined && (position[0] ?? null) === null;
  if (direction === "forward") {
    if (atNull) return readRows(db, sql, unkeyed(), direction, limit, position);
    const rows = await readRows(db, sql, keyed(), direction, limit, position, true);
    if (rows.length >= limit || !(await someUnkeyed(db, sql))) return rows;
    return [
      ...rows,
      ...(await readRows(db, sql, unkeyed(), direction, limit - rows.length, undefined)),
    ];
  }
  if (position !== undefined && !atNull) {
    return readRows(db, sql, keyed(), direction, limit, position, true);
  }
  const rows = (await someUnkeyed(db, sql))
    ? await readRows(db, sql, unkeyed(), direction, limit, position)
    : [];
  if (rows.length >= limit) return rows;
  return [
    ...rows,
    ...(await readRows(db, sql, keyed(), direction, limit - rows.length, undefined, true)),
  ];
}

/**
 * One page of a search, by keyset: never an OFFSET, so every page costs the same however deep
 * it is and a page never repeats or skips a row when entries change between requests.
 * Rows come back in the forward order either way; `more` says whether rows lie beyond the page,
 * `behind` whether rows lie on the other side of the cursor (read only when there is one).
 */
export async function searchPage(
  db: Queryable,
  sql: SearchSql,
  page: SearchPageRequest,
): Promise<{ rows: SearchRow[]; more: boolean; behind: boolean }> {
  const forward = page.direction === "forward";
  const walk = await walks(db, sql, page.walkAbove ?? WALK_ABOVE);
  const read = await rowsBeyond(db, sql, walk, page.direction, page.limit + 1, page.position);
  const rows = read.slice(0, page.limit);
  if (!forward) rows.reverse();
  let behind = false;
  if (page.position) {
    // The other side of the cursor includes the cursor's own row.
    behind =
      (await cursorRowMatches(db, sql, page.position)) ||
      (await rowsBeyond(db, sql, walk, forward ? "backward" : "forward", 1, page.position)).length >
        0;
  }
  return { rows, more: read.length > page.limit, behind };
}

/** Whether the row a cursor names still matches the search with the same order values. */
async function cursorRowMatches(
  db: Queryable,
  sql: SearchSql,
  position: KeysetPosition,
): Promise<boolean> {
  const params = [...sql.params];
  const same = sql.columns.map((column, index) => {
    const value = position[index] ?? null;
    return value === null
      ? `q.${column.alias} IS NULL`
      : `q.${column.alias} = $${params.push(value)}::${column.cast}`;
  });
  const uuid = position[sql.columns.findIndex((column) => column.alias === "entry_uuid")];
  params.push(uuid);
  const result = await db.query<{ found: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM (${sql.inner} AND e.entry_uuid = $${params.length}::uuid) AS q
       WHERE ${same.join(" AND ")}) AS found`,
    params,
  );
  return result.rows[0]?.found ?? false;
}

/** How many entries the search matches. */
export async function countSearch(db: Queryable, sql: SearchSql): Promise<number> {
  const result = await db.query<{ count: number }>(
    `SELECT count(*)::bigint AS count FROM ${sql.source} WHERE ${sql.where}`,
    sql.params.slice(0, sql.whereParams),
  );
  return result.rows[0]?.count ?? 0;
}
