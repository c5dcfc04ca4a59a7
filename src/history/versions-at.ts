import type { Queryable } from "../db/index.ts";
import {
  compileFilterToIndexedSql,
  compileFilterToSql,
  typesOfSql,
  type FilterNode,
  type TypesOf,
} from "../filters/index.ts";
import { VALUE_KEY_LENGTH } from "../../projections/entries/index.ts";
import { ENTRY_VERSION_VALUES, ENTRY_VERSIONS } from "../../projections/entry-versions/index.ts";

/** What `versionsAt` reads: the moment, and which entries. */
export interface VersionsAtQuery {
  /** The parameter holding the moment (a timestamptz). */
  readonly at: string;
  /** The query's parameters so far; the filter's names and values are pushed here. */
  readonly params: unknown[];
  /** The parameter holding a type: only its entries. Otherwise every entry, typed or not. */
  readonly type?: string;
  /**
   * The filter the entries must match (canonical names, `checkAttributes`). With `type`, it
   * is answered from the value spans alone; without, a typed entry's from the spans of
   * `types` and an untyped one's from its JSON.
   */
  readonly filter?: FilterNode;
  /**
   * The parameter of the `text[]` of types a filter without `type` reads the spans of; by
   * default every type the spans hold rows of, read by the statement itself (`typesOfSql`).
   */
  readonly types?: string;
  /** The relation's alias; `e` by default. */
  readonly alias?: string;
  /**
   * A page of the relation in creation order, as a search reads it (the GraphQL gateway's
   * `@at`): a condition on its rows as `e` (a scope on `e.dn_norm`), and the window each part
   * is ordered and limited by (`ORDER BY e.created_position, e.entry_uuid LIMIT …`). Without
   * a type only. Each part then walks the versions in creation order (the index of
   * `created_position`, which holds their validity) and stops with the page.
   */
  readonly page?: { readonly where: string; readonly window: (alias: string) => string };
}

/**
 * Every entry as it was at a moment that matches a filter, as a relation with the columns of
 * `entries` that a search reads: `entry_uuid`, `type`, `dn`, `dn_norm`, `attributes`,
 * `operational`, `modified_at` (the version's start), `version`, `created_position`, and `a`
 * (user and operational attributes). Each entry appears with its version valid then,
 * `valid_from <= at < valid_to`, unless that version is its deletion; versions of one entry
 * never overlap, so an entry appears at most once, and a version that ended the moment it
 * began (two changes at one instant) is valid at no moment. The one reader of the versions
 * valid at a moment: the REST channel's typed search and the GraphQL gateway's `@at`.
 *
 * The filter reads the spans of the versions' values valid then (`entry_version_values`,
 * `compileFilterToIndexedSql` with `spans: { at }`), as a search now reads `entry_values`.
 * The versions are read along the index of (type, end, start) when a type is given: a recent
 * moment reads about the entries alive then and the versions ended since.
 * A `page` (the GraphQL gateway's searches) is read along the index of creation order, which
 * holds each version's validity: the versions not valid then are passed over in the index, and
 * the walk stops with the page.
 *
 * `created_position` is the position of the entry's first version (its add, or its first
 * snapshot), as `entries` keeps it: the order the directory returns entries in. Every version
 * carries it, so no row looks up its entry's first version. `dn_norm` is
 * the DN in lower case: the versions keep the DN as the directory spelled it, so a sort by DN
 * at a moment may differ from now's for DNs spelled with blanks or upper-case types.
 *
 * @example
 * const params: unknown[] = [at, "user"];
 * const sql = `SELECT e.dn FROM ${versionsAt({ at: "$1", type: "$2", filter, params })}`;
 * await pool.query(sql, params);
 */
export function versionsAt(query: VersionsAtQuery): string {
  const { at, params, type, filter } = query;
  const alias = query.alias ?? "e";
  const valid = `NOT v.deleted AND v.valid_from <= ${at}::timestamptz
        AND coalesce(v.valid_to, 'infinity') > ${at}::timestamptz`;
  const relation = (condition: string) => `SELECT v.entry_uuid, v.version, v.type, v.dn,
            lower(v.dn) AS dn_norm, v.attributes, v.operational, v.attributes || v.operational AS a,
            v.valid_from AS modified_at, v.created_position
       FROM ${ENTRY_VERSIONS} AS v WHERE ${condition} AND ${valid}`;
  const indexed = (typeParam: string | TypesOf, typeList: boolean) =>
    compileFilterToIndexedSql(filter!, {
      valuesTable: ENTRY_VERSION_VALUES,
      entryColumn: "v.entry_uuid",
      typeParam,
      typeList,
      keyLength: VALUE_KEY_LENGTH,
      params,
      spans: { at },
    });
  if (type !== undefined) {
    const matches = filter ? indexed(type, false) : "TRUE";
    return `(${relation(`v.type = ${type} AND ${matches}`)}) AS ${alias}`;
  }
  const part = (rows: string) =>
    query.page === undefined
      ? rows
      : `(SELECT e.* FROM (${rows}) AS e WHERE ${query.page.where} ${query.page.window("e")})`;
  if (!filter) return `(${part(relation("TRUE"))}) AS ${alias}`;
  // Naming the types here too keeps their parameter in the query when the filter compiles to
  // a constant (`(&)`); a typed version of a type without spans has no value to match anyway.
  const typed =
    query.types === undefined
      ? `v.type = ANY(${typesOfSql(ENTRY_VERSION_VALUES)}) AND ${indexed({ typesOf: ENTRY_VERSION_VALUES }, false)}`
      : `v.type = ANY(${query.types}::text[]) AND ${indexed(query.types, true)}`;
  const json = compileFilterToSql(filter, { attributesColumn: "u.a", params });
  const untyped = `SELECT u.* FROM (${relation("v.type IS NULL")}) AS u WHERE ${json}`;
  // With a page, each part is ordered and limited on its own, as the entries' search does:
  // over the union the planner could only read every version valid then and sort them all.
  return `(${part(relation(typed))}
           UNION ALL
           ${part(untyped)}) AS ${alias}`;
}

/**
 * The types the value spans hold rows of, for `versionsAt`'s `types`: read as a skip along
 * the match index, which starts with the type (a few probes, whatever the table's size).
 */
export async function versionTypes(db: Queryable): Promise<string[]> {
  const result = await db.query<{ type: string }>(
    `SELECT unnest(${typesOfSql(ENTRY_VERSION_VALUES)}) AS type`,
  );
  return result.rows.map((row) => row.type);
}
