import type { Queryable } from "../db/index.ts";
import {
  compileFilterToIndexedSet,
  compileFilterToIndexedSql,
  compileFilterToSql,
  isIndexedSet,
  isPointTest,
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
 * With a type and a filter that has an equality (or a conjunction of two indexed terms), the
 * matches are read first, in entryUUID order, and each one's version probed (`matchesFirst`);
 * otherwise the versions are read along the index of (type, end, start) when a type is given:
 * a recent moment reads about the entries alive then and the versions ended since.
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
    const walked = filter ? matchesFirst({ at, type, filter, params }) : undefined;
    if (walked) return `(${walked}) AS ${alias}`;
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
 * The versions valid at `at` of the entries of type `type` that match `filter`, read from the
 * matches: the spans valid then that meet the filter's comparisons (its equality, or the
 * intersection of the sets of its conjunction's terms), each entry once, in entryUUID order
 * (the index of (type, attribute, key, entry) gives a point's spans in that order, either
 * way, each checked for its validity in the index), then each match's version valid then,
 * one probe of the (entry_uuid, valid_from) index: the latest version started by then. The
 * conjunction's terms that are no sets (a `not`) are tested on each match. A page in
 * entryUUID order, forward or backward, stops with the page, and a keyset bound on the
 * entry is a bound of the index range.
 *
 * The spans decide: a span is valid at a moment only while a version of its type that is
 * no deletion holds the value, so the version probed is valid then, typed and not deleted
 * (checked all the same). Undefined when the filter has no equality and no two sets to
 * intersect: its matches may come out of the index more than once, or in another order
 * (a substring, a range), and the versions valid then are read and semi-joined to them.
 *
 * Why not the semi-join for these too: the planner walked every version in entryUUID order
 * (twelve an entry, all read from the heap to check their validity) beside every span of
 * the attribute until a page of entries matched, 658 ms at 100,000 entries where the search
 * now took 14 (docs/history-index.md).
 */
function matchesFirst(query: {
  at: string;
  type: string;
  filter: FilterNode;
  params: unknown[];
}): string | undefined {
  const { at, type, filter, params } = query;
  const parts = filter.op === "and" ? filter.filters : [filter];
  const sets = parts.filter(isIndexedSet);
  const first = sets[0];
  if (!first || (sets.length === 1 && !isPointTest(first, VALUE_KEY_LENGTH))) return undefined;
  const options = {
    valuesTable: ENTRY_VERSION_VALUES,
    typeParam: type,
    keyLength: VALUE_KEY_LENGTH,
    params,
    spans: { at },
  };
  const matches = sets.map((part) => compileFilterToIndexedSet(part, options)!);
  const rest = parts.filter((part) => !isIndexedSet(part));
  const conditions = [
    `v.type = ${type}`,
    "NOT v.deleted",
    `coalesce(v.valid_to, 'infinity') > ${at}::timestamptz`,
  ];
  if (rest.length > 0) {
    conditions.push(
      compileFilterToIndexedSql(
        { op: "and", filters: rest },
        { ...options, entryColumn: "m.entry_uuid" },
      ),
    );
  }
  const set = matches.length === 1 ? matches[0]! : matches.map((m) => `(${m})`).join(" INTERSECT ");
  return `SELECT m.entry_uuid, v.version, v.type, v.dn, lower(v.dn) AS dn_norm, v.attributes,
            v.operational, v.attributes || v.operational AS a, v.valid_from AS modified_at,
            v.created_position
       FROM (${set}) AS m
      CROSS JOIN LATERAL (SELECT w.* FROM ${ENTRY_VERSIONS} AS w
              WHERE w.entry_uuid = m.entry_uuid AND w.valid_from <= ${at}::timestamptz
              ORDER BY w.valid_from DESC, w.version DESC LIMIT 1) AS v
      WHERE ${conditions.join(" AND ")}`;
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
