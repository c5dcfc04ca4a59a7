import type { Queryable } from "../../db/index.ts";
import type { AttributeMap } from "../../events/index.ts";
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
  const params = [...sql.params];
  const keyset = page.position
    ? `WHERE ${sql.keyset(page.position, forward ? "after" : "before", params)}`
    : "";
  params.push(page.limit + 1);
  const result = await db.query<SearchRow>(
    `SELECT * FROM (${sql.inner}) AS q ${keyset}
      ORDER BY ${sql.orderBy(page.direction)} LIMIT $${params.length}`,
    params,
  );
  const rows = result.rows.slice(0, page.limit);
  if (!forward) rows.reverse();
  let behind = false;
  if (page.position) {
    // The other side of the cursor includes the cursor's own row.
    const behindParams = [...sql.params];
    const other = sql.keyset(page.position, forward ? "after" : "before", behindParams);
    const found = await db.query<{ found: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM (${sql.inner}) AS q WHERE NOT ${other}) AS found`,
      behindParams,
    );
    behind = found.rows[0]?.found ?? false;
  }
  return { rows, more: result.rows.length > page.limit, behind };
}

/** How many entries the search matches. */
export async function countSearch(db: Queryable, sql: SearchSql): Promise<number> {
  const result = await db.query<{ count: number }>(
    `SELECT count(*)::bigint AS count FROM ${sql.source} WHERE ${sql.where}`,
    sql.params.slice(0, sql.whereParams),
  );
  return result.rows[0]?.count ?? 0;
}
