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
  /** Walk a group's second sort key only above this many matches (default `GROUP_WALK_ABOVE`). */
  readonly groupAbove?: number;
}

/**
 * A filtered search sorted by an attribute sorts its matches when there are at most this many,
 * and walks the attribute's index otherwise. Walking finds a page after about
 * `limit × entries / matches` keys: quick for a filter that matches much, but every key of the
 * type for one that matches little or nothing (`sn eq "Meyer"` sorted by `sn` over 100,000
 * people took 1.6 s); sorting costs about the matches. Counting up to the bound is one index
 * probe of the filter. A filter that narrows the walked attribute itself to one value
 * (`SearchSql.cluster`) walks that value's range alone, once no later value than an entry's
 * first meets it (a match outside the range): otherwise it is sorted, as a walk would read
 * every key before the range.
 */
export const WALK_ABOVE = 2000;

/**
 * A walk sorted by a second attribute orders each group of the first key's ties by it. A
 * group of at most this many matches is sorted; a larger one walks the second key's index
 * within the group (`sn,-givenName` over 1,000,000 people, 20 surnames: sorting the first
 * group read 50,000 entries, 580 ms a page).
 */
export const GROUP_WALK_ABOVE = 2000;

type Side = "after" | "before";
type Direction = "forward" | "backward";

/** How a read orders and bounds its rows (see `SearchSql.orderBy`). */
interface ReadShape {
  /** Leading columns with a value in every row. */
  readonly keyed?: number;
  /** Leading columns holding one value in every row (a group's), left out of the order. */
  readonly fixed?: number;
  /** More conditions on `q`, binding their values to `params`. */
  readonly also?: (params: unknown[]) => string[];
}

/**
 * Up to `limit` rows of `source` (a query with the search's columns, binding its own values
 * to `params`) strictly beyond `position` in `direction`, in that direction's order.
 */
async function readRows(
  db: Queryable,
  sql: SearchSql,
  source: (params: unknown[]) => string,
  direction: Direction,
  limit: number,
  position: KeysetPosition | undefined,
  shape: ReadShape = {},
): Promise<SearchRow[]> {
  const side: Side = direction === "forward" ? "after" : "before";
  const { keyed = 0, fixed = 0 } = shape;
  const params = [...sql.params];
  const from = source(params);
  const conditions = shape.also?.(params) ?? [];
  if (position) {
    conditions.push(
      sql.leadingBound(position, side, params, keyed, fixed),
      sql.keyset(position, side, params),
    );
  }
  params.push(limit);
  const where = conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : "";
  const result = await db.query<SearchRow>(
    `SELECT * FROM (${from}) AS q ${where}
      ORDER BY ${sql.orderBy(direction, keyed, fixed)} LIMIT $${params.length}`,
    params,
  );
  return result.rows;
}

/** Whether some entries of the type have no first value of the walked attribute. */
async function someUnkeyed(db: Queryable, sql: SearchSql): Promise<boolean> {
  const type = sql.params[0];
  const attribute = sql.walk!.attribute;
  const result = await db.query<{ some: boolean }>(
    `SELECT coalesce((SELECT entries FROM ${ENTRY_VALUE_COUNTS} WHERE type = $1 AND attribute = $2), 0)
          > coalesce((SELECT entries FROM ${ENTRY_VALUE_COUNTS} WHERE type = $1 AND attribute = $3), 0)
            AS some`,
    [type, ENTRY_ROW_ATTRIBUTE, attribute],
  );
  return result.rows[0]?.some ?? false;
}

/**
 * Whether a page walks the first sort key's index (see `WALK_ABOVE`). The matches are counted
 * from the filter's index ranges when it has them (`SearchSql.matchSet`): over the entries,
 * the planner merged every entry of the type with the range (24,000 entries read for 2,001
 * matches of `title = Engineer` over 100,000 people, 3.7 ms). A filter that narrows the key
 * to a range walks only when every match lies in it (`SearchSql.laterValues`): `sn eq
 * "Meyer"` sorted by `sn,cn` sorted its 25,000 matches over 1,000,000 people, 620 ms a page.
 */
export async function walks(db: Queryable, sql: SearchSql, walkAbove: number): Promise<boolean> {
  // A range of several values is sorted still: over 100,000 people the planner hashed the
  // 5,000 matches of `sn sw "Me"` in every statement of a walk, and sorted them anyway.
  if (!sql.walk || (sql.cluster && !sql.pointCluster)) return false;
  if (!sql.filtered) return true;
  if (!Number.isFinite(walkAbove)) return false;
  // A configured sort pair reads a point cluster (`sn eq "Meyer"` by `sn,cn`) as one range of
  // its index, however few or many it holds: no need to count them.
  if (sql.pair && sql.pointCluster) {
    const later = sql.laterValues();
    return (await db.query(later.sql, [...later.params])).rows.length === 0;
  }
  const set = sql.matchSet;
  const params = set ? set.params : sql.params.slice(0, sql.whereParams);
  const matching = set
    ? `SELECT 1 FROM (${set.sql}) AS s`
    : `SELECT 1 FROM ${sql.source} WHERE ${sql.where}`;
  if (!(await more(db, matching, params, walkAbove))) return false;
  if (!sql.cluster) return true;
  const later = sql.laterValues();
  return (await db.query(later.sql, [...later.params])).rows.length === 0;
}

/** Whether `rows` (a query, with `params`) gives more than `bound` rows: counted up to one beyond. */
async function more(
  db: Queryable,
  rows: string,
  params: readonly unknown[],
  bound: number,
): Promise<boolean> {
  const result = await db.query<{ matches: number }>(
    `SELECT count(*)::int AS matches FROM (${rows} LIMIT $${params.length + 1}) AS m`,
    [...params, bound + 1],
  );
  return (result.rows[0]?.matches ?? 0) > bound;
}

/** One way of reading a walked column: its rows with a value, and those without. */
interface Branches {
  keyed(direction: Direction, limit: number, position?: KeysetPosition): Promise<SearchRow[]>;
  unkeyed(direction: Direction, limit: number, position?: KeysetPosition): Promise<SearchRow[]>;
  someUnkeyed(): Promise<boolean>;
}

/**
 * Rows beyond `position` in `direction`, at most `limit`, of a walk of column `index`: the
 * rows with a value there first (forward), then, only if the page is not full yet and some row
 * lacks one, those without (NULLs sort last either way).
 */
async function walkRows(
  branches: Branches,
  index: number,
  direction: Direction,
  limit: number,
  position: KeysetPosition | undefined,
): Promise<SearchRow[]> {
  const atNull = position !== undefined && (position[index] ?? null) === null;
  if (direction === "forward") {
    if (atNull) return branches.unkeyed(direction, limit, position);
    const rows = await branches.keyed(direction, limit, position);
    if (rows.length >= limit || !(await branches.someUnkeyed())) return rows;
    return [...rows, ...(await branches.unkeyed(direction, limit - rows.length))];
  }
  if (position !== undefined && !atNull) return branches.keyed(direction, limit, position);
  const rows = (await branches.someUnkeyed())
    ? await branches.unkeyed(direction, limit, position)
    : [];
  if (rows.length >= limit) return rows;
  return [...rows, ...(await branches.keyed(direction, limit - rows.length))];
}

/** Reads one search's pages, by the strategy `searchPage` chose. */
class Reader {
  private readonly db: Queryable;
  private readonly sql: SearchSql;
  private readonly groupAbove: number;
  private readonly sizes = new Map<string, Promise<boolean>>();

  constructor(db: Queryable, sql: SearchSql, groupAbove: number) {
    this.db = db;
    this.sql = sql;
    this.groupAbove = groupAbove;
  }

  /**
   * Rows beyond `position` in `direction`, at most `limit`: walking the first sort key's index
   * (`walk`, see `walks`), or sorting the matches.
   */
  rows(
    walk: boolean,
    direction: Direction,
    limit: number,
    position: KeysetPosition | undefined,
  ): Promise<SearchRow[]> {
    const { db, sql } = this;
    if (!walk) return readRows(db, sql, () => sql.inner, direction, limit, position);
    return walkRows(
      {
        keyed: (direction, limit, position) => this.keyed(direction, limit, position),
        unkeyed: (direction, limit, position) =>
          readRows(
            db,
            sql,
            (params) => sql.walkSource("unkeyed", params),
            direction,
            limit,
            position,
          ),
        // Every match of a cluster has a value of the key, in the range.
        someUnkeyed: async () => !sql.cluster && (await someUnkeyed(db, sql)),
      },
      0,
      direction,
      limit,
      position,
    );
  }

  /**
   * The walk's rows with a first sort value. Without a second attribute to sort by, one read
   * of the index in key order. With one, each group of the first key's ties is ordered by the
   * second: the group the position is in is read beyond it, then the first keys of the next
   * `limit` entries say which groups the page reaches. The groups before the last of those
   * hold fewer than `limit` entries together and are read in one sorted query; the last may
   * be of any size (`group`).
   */
  private async keyed(
    direction: Direction,
    limit: number,
    position?: KeysetPosition,
  ): Promise<SearchRow[]> {
    const { db, sql } = this;
    const keyedSource = (params: unknown[]) => sql.walkSource("keyed", params);
    if (!sql.group) return readRows(db, sql, keyedSource, direction, limit, position, { keyed: 1 });
    const rows: SearchRow[] = [];
    const after = position?.[0] ?? undefined;
    if (after !== undefined) {
      rows.push(...(await this.group(after, direction, limit, position)));
      if (rows.length >= limit) return rows;
    }
    const need = limit - rows.length;
    const keys = await this.nextKeys(direction, need, after);
    const last = keys.at(-1);
    if (last === undefined) return rows;
    const beyond = this.beyond(direction);
    const within = (params: unknown[]) =>
      after === undefined ? [] : [`q.s0 ${beyond} $${params.push(after)}::text`];
    if (keys.length < need) {
      // Every keyed row beyond the position is among these.
      const rest = await readRows(db, sql, keyedSource, direction, need, undefined, {
        keyed: 1,
        also: within,
      });
      return [...rows, ...rest];
    }
    if (keys[0] !== last) {
      const before = beyond === ">" ? "<" : ">";
      rows.push(
        ...(await readRows(db, sql, keyedSource, direction, need, undefined, {
          keyed: 1,
          also: (params) => [...within(params), `q.s0 ${before} $${params.push(last)}::text`],
        })),
      );
    }
    return [...rows, ...(await this.group(last, direction, limit - rows.length))];
  }

  /** The comparison that holds a first key beyond another in `direction`. */
  private beyond(direction: Direction): ">" | "<" {
    return (direction === "forward") !== this.sql.walk!.descending ? ">" : "<";
  }

  /** The first keys of the next `limit` keyed matches beyond the group `after`, in order. */
  private async nextKeys(direction: Direction, limit: number, after?: string): Promise<string[]> {
    const beyond = this.beyond(direction);
    const params = this.sql.params.slice(0, this.sql.whereParams);
    const keys = this.sql.groupKeys(params);
    const bound = after === undefined ? "" : `WHERE q.s0 ${beyond} $${params.push(after)}::text`;
    params.push(limit);
    const result = await this.db.query<{ s0: string }>(
      `SELECT q.s0 FROM (${keys}) AS q ${bound}
        ORDER BY q.s0 ${beyond === ">" ? "ASC" : "DESC"} LIMIT $${params.length}`,
      params,
    );
    return result.rows.map((row) => row.s0);
  }

  /**
   * Whether the group of first key `key` has more matches than `groupAbove`: asked once per
   * group by a page (its rows and whether rows lie behind its cursor ask about the same one).
   */
  private large(key: string): Promise<boolean> {
    let large = this.sizes.get(key);
    if (!large) {
      large = this.countGroup(key);
      this.sizes.set(key, large);
    }
    return large;
  }

  private async countGroup(key: string): Promise<boolean> {
    if (!Number.isFinite(this.groupAbove)) return false;
    // A walked cluster of one value is one group holding every match: counted from the
    // filter's index ranges, as `walks` counts them.
    const set = this.sql.matchSet;
    if (this.sql.pointCluster && set) {
      return more(this.db, `SELECT 1 FROM (${set.sql}) AS s`, set.params, this.groupAbove);
    }
    const params = this.sql.params.slice(0, this.sql.whereParams);
    const keys = this.sql.groupKeys(params);
    const value = params.push(key);
    const rows = `SELECT 1 FROM (${keys}) AS q WHERE q.s0 = $${value}::text`;
    return more(this.db, rows, params, this.groupAbove);
  }

  /**
   * Rows of the group of first key `key` beyond `position` (or from the group's start), at
   * most `limit`: sorted, or, for a large group, walking the second key's index within it; with
   * a sort pair (`SearchSql.pair`), any group as one range of the pair's index.
   */
  private async group(
    key: string,
    direction: Direction,
    limit: number,
    position?: KeysetPosition,
  ): Promise<SearchRow[]> {
    const { db, sql } = this;
    // A sort pair's index holds every group in the page's order: read, never sorted (unless
    // the caller asks for every group sorted, `groupAbove` infinite).
    const read = sql.pair ? Number.isFinite(this.groupAbove) : await this.large(key);
    if (!read) {
      return readRows(
        db,
        sql,
        (params) => sql.walkSource("keyed", params),
        direction,
        limit,
        position,
        {
          keyed: 1,
          also: (params) => [`q.s0 = $${params.push(key)}::text`],
        },
      );
    }
    const source = (branch: "keyed" | "unkeyed") => (params: unknown[]) =>
      sql.groupWalkSource(branch, `$${params.push(key)}`);
    return walkRows(
      {
        keyed: (direction, limit, position) =>
          readRows(db, sql, source("keyed"), direction, limit, position, { keyed: 2, fixed: 1 }),
        unkeyed: (direction, limit, position) =>
          readRows(db, sql, source("unkeyed"), direction, limit, position, { keyed: 1, fixed: 1 }),
        // Only asked at the group's end, where reading them finds out as quickly.
        someUnkeyed: async () => true,
      },
      1,
      direction,
      limit,
      position,
    );
  }
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
  const reader = new Reader(db, sql, page.groupAbove ?? GROUP_WALK_ABOVE);
  const read = await reader.rows(walk, page.direction, page.limit + 1, page.position);
  const rows = read.slice(0, page.limit);
  if (!forward) rows.reverse();
  let behind = false;
  if (page.position) {
    // The other side of the cursor includes the cursor's own row.
    behind =
      (await cursorRowMatches(db, sql, page.position)) ||
      (await reader.rows(walk, forward ? "backward" : "forward", 1, page.position)).length > 0;
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
