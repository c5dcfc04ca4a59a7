import type { Queryable } from "../../db/index.ts";
import {
  normalizeDN,
  type DirectoryClient,
  type DirectoryEntry,
  type DirectorySchema,
  type ReadOptions,
  type SearchOptions,
} from "../../directory/index.ts";
import type { NameSet } from "../../events/index.ts";
import {
  checkAttributes,
  compileFilterToIndexedSql,
  compileFilterToSql,
  type FilterNode,
} from "../../filters/index.ts";
import {
  ENTRIES,
  ENTRY_ROW_ATTRIBUTE,
  ENTRY_VALUE_COUNTS,
  ENTRY_VALUES,
  parentDnSql,
  VALUE_KEY_LENGTH,
} from "../../../projections/entries/index.ts";

/**
 * What capture records, which a read must lie within to be answered from the projection:
 * the entries at and below the directory's base (the import and the accesslog cover them
 * all), every attribute but the redacted ones.
 */
export interface ProjectionSource {
  readonly db: Queryable;
  /** `[directory] base`. */
  readonly base: string;
  readonly schema: DirectorySchema;
  /** `[directory.capture] redact` with the built-in list: their values are not recorded. */
  readonly redacted: NameSet;
}

/**
 * Operational attributes the directory computes as it answers rather than stores: the
 * projection computes them too (`entryDN` is the row's DN, `hasSubordinates` whether a row
 * lies below it) and a filter on them goes to the directory.
 */
const COMPUTED = new Set(["entrydn", "hassubordinates"]);

/** The largest page a projection search reads at once (a gateway search asks for fewer). */
export const PAGE_MAX = 500;

/**
 * The directory as the gateway's reads see it with `[graphql] reads = "projection"`: searches
 * and reads that lie inside what capture records (`covers`) are answered from the `entries`
 * projection, with the entries, order (the directory's: creation order, `created_position`),
 * paging and values the directory would give; everything else, writes included, goes to
 * `directory`. Matched values (RFC 3876) are not applied: every value comes, of which the
 * loaders use the ones they asked for.
 *
 * @example
 * const reads = projectionDirectory(client, { db: pool, base, schema, redacted });
 * for await (const page of reads.search(PEOPLE, { filter })) ...; // from `entries`
 */
export function projectionDirectory(
  directory: DirectoryClient,
  source: ProjectionSource,
): DirectoryClient {
  const base = normalizeDN(source.base);
  return new Proxy(directory, {
    get(target, property, receiver) {
      if (property === "search") {
        return (dn: string, options: SearchOptions = {}) => {
          const filter = coveredFilter(source, base, dn, options);
          return filter === undefined
            ? target.search(dn, options)
            : searchProjection(source, dn, options, filter);
        };
      }
      if (property === "get") {
        return async (dn: string, options: ReadOptions = {}) => {
          const filter = coveredFilter(source, base, dn, options);
          if (filter === undefined) return target.get(dn, options);
          for await (const page of searchProjection(
            source,
            dn,
            { ...options, scope: "base" },
            filter,
          )) {
            return page[0];
          }
          return undefined;
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? (value as Function).bind(target) : value; // eslint-disable-line @typescript-eslint/no-unsafe-function-type
    },
  });
}

/**
 * The search's filter with the schema's names when the projection can answer it; undefined
 * when it lies outside what capture records: above or beside the directory's base, a redacted
 * attribute asked for or filtered on, or a filter the SQL compiler would read otherwise than
 * the directory (an unknown attribute, a computed one, an approximate or ordering match,
 * whose meaning depends on the attribute's matching rules).
 */
function coveredFilter(
  source: ProjectionSource,
  base: string,
  dn: string,
  options: ReadOptions & Pick<SearchOptions, "filter">,
): FilterNode | undefined {
  let normalized: string;
  try {
    normalized = normalizeDN(dn);
  } catch {
    return undefined;
  }
  if (normalized !== base && !normalized.endsWith(`,${base}`)) return undefined;
  for (const name of options.attributes ?? []) {
    if (source.redacted.has(name)) return undefined;
  }
  const filter = options.filter ?? { op: "present", attribute: "objectClass" };
  let comparable = true;
  const visit = (node: FilterNode): void => {
    switch (node.op) {
      case "and":
      case "or":
        node.filters.forEach(visit);
        return;
      case "not":
        visit(node.filter);
        return;
      case "approx":
      case "ge":
      case "le":
      case "gt":
      case "lt":
        comparable = false;
        return;
      default:
        if (source.redacted.has(node.attribute) || COMPUTED.has(node.attribute.toLowerCase())) {
          comparable = false;
        }
    }
  };
  visit(filter);
  if (!comparable) return undefined;
  const { ast, unknown } = checkAttributes(filter, (name) => source.schema.canonical(name));
  return unknown.length === 0 ? ast : undefined;
}

export interface EntryRow {
  readonly dn: string;
  readonly values: Record<string, string[]>;
  readonly has_subordinates: boolean | null;
}

/** The scope's condition on `e.dn_norm`, binding the base's normalised DN. */
export function scopeSql(scope: NonNullable<SearchOptions["scope"]>, base: string): string {
  const below = `right(e.dn_norm, length(${base}::text) + 1) = ',' || ${base}::text`;
  switch (scope) {
    case "base":
      return `e.dn_norm = ${base}::text`;
    case "children":
      return below;
    case "one":
      // The entries whose parent is the base: one range of the index of parents.
      return `${parentDnSql("e.dn_norm")} = ${base}::text`;
    case "sub":
      return `(e.dn_norm = ${base}::text OR ${below})`;
  }
}

/**
 * The entries in scope that match, as `e` with the entries' columns and `a` (user and
 * operational attributes): the typed ones by the value index (`entry_values`), as the REST
 * channel filters, the untyped ones (containers, for the most part: the index holds no rows of
 * them) by their JSON, with the same semantics.
 */
function matchingEntries(scope: string, filter: FilterNode, params: unknown[]): string {
  const indexed = compileFilterToIndexedSql(filter, {
    valuesTable: ENTRY_VALUES,
    entryColumn: "e.entry_uuid",
    // A gateway search spans every type, and the index's ranges start with the type: the
    // types it holds rows of (each typed entry has a row named `ENTRY_ROW_ATTRIBUTE`, counted
    // per type), read by the statement itself.
    typeParam: {
      table: ENTRY_VALUE_COUNTS,
      attributeParam: `$${params.push(ENTRY_ROW_ATTRIBUTE)}`,
    },
    keyLength: VALUE_KEY_LENGTH,
    params,
  });
  const json = compileFilterToSql(filter, { attributesColumn: "u.a", params });
  return `(SELECT e.*, e.attributes || e.operational AS a FROM ${ENTRIES} AS e
            WHERE e.type IS NOT NULL AND ${scope} AND ${indexed}
           UNION ALL
           SELECT u.* FROM (SELECT e.*, e.attributes || e.operational AS a FROM ${ENTRIES} AS e
                             WHERE e.type IS NULL AND ${scope}) AS u
            WHERE ${json}) AS e`;
}

/** A search answered from `entries`, in pages as the directory would send them. */
async function* searchProjection(
  source: ProjectionSource,
  dn: string,
  options: SearchOptions,
  filter: FilterNode,
): AsyncGenerator<DirectoryEntry[], void, undefined> {
  const params: unknown[] = [];
  const bind = (value: unknown) => `$${params.push(value)}`;
  const scope = scopeSql(options.scope ?? "sub", bind(normalizeDN(dn)));
  const matching = matchingEntries(scope, filter, params);
  const select = selection(source.schema, options.attributes);
  // Whether an entry has children: the first row of its children in the index of parents
  // (parent, DN). Asked as EXISTS, the planner expects a parent to have thousands of children
  // (most entries share one) and scans the table for the first, which for a leaf is every row;
  // the first child in DN order is read from the index alone.
  const parent = parentDnSql("c.dn_norm");
  const subordinates = select.computed.has("hassubordinates")
    ? `(SELECT c.dn_norm FROM ${ENTRIES} AS c WHERE ${parent} = e.dn_norm
         ORDER BY ${parent}, c.dn_norm LIMIT 1) IS NOT NULL`
    : "NULL::boolean";
  yield* readPages(source, options, select, params, {
    values: valuesSql(select, options.matchedValues, bind),
    subordinates,
    from: matching,
  });
}

/**
 * Reads a search's matches page after page, in the directory's order (creation order,
 * `created_position`), as the directory sends a search: pages of `options.pageSize` (at most
 * `PAGE_MAX`) until `options.sizeLimit` entries or the last match, or, with `paged: false`,
 * every entry up to the size limit at once. `from` is the statement's `FROM … [WHERE …]` over
 * entries `e`; `values` and `subordinates` its columns, bound in `params`.
 */
export async function* readPages(
  source: ProjectionSource,
  options: SearchOptions,
  select: Selection,
  params: unknown[],
  statement: { readonly values: string; readonly subordinates: string; readonly from: string },
): AsyncGenerator<DirectoryEntry[], void, undefined> {
  const limit = options.sizeLimit ?? null;
  const pageSize = Math.max(1, Math.min(options.pageSize ?? PAGE_MAX, PAGE_MAX));
  const sql = `SELECT e.dn, ${statement.values} AS values, ${statement.subordinates} AS has_subordinates
      FROM ${statement.from}
     ORDER BY e.created_position, e.entry_uuid
     LIMIT $${params.push(limit)}::bigint OFFSET $${params.push(0)}::bigint`;
  const offsetParam = params.length - 1;
  const binary = new Set((options.binaryAttributes ?? []).map((name) => baseName(name)));
  const paged = options.paged !== false;
  for (let offset = 0; ;) {
    const count = limit === null ? pageSize : Math.min(pageSize, limit - offset);
    if (count <= 0) return;
    params[offsetParam - 1] = paged ? count : limit;
    params[offsetParam] = offset;
    const result = await source.db.query<EntryRow>(sql, params);
    if (result.rows.length > 0) {
      yield result.rows.map((row) => entryOf(source.schema, row, select, binary));
    }
    offset += result.rows.length;
    if (!paged || result.rows.length < count) return;
  }
}

/**
 * The attributes a row brings, chosen in the database: a group's thousands of members stay
 * there when no field reads them. The matched values (RFC 3876) of one attribute, when every
 * equality item names that one (the loaders' lookups by attribute), keep only its values that
 * equal one of the items', folded as the filters compare; other items keep every value.
 */
export function valuesSql(
  select: Selection,
  matchedValues: readonly FilterNode[] | undefined,
  bind: (value: unknown) => string,
): string {
  if (select.allUser && select.allOperational) return "e.a";
  const whole = [
    ...(select.allUser ? ["e.attributes"] : []),
    ...(select.allOperational ? ["e.operational"] : []),
  ];
  const equal = (matchedValues ?? []).flatMap((item) => (item.op === "eq" ? [item] : []));
  const matched = new Set(equal.map((item) => baseName(item.attribute)));
  let value = "a.value";
  if (matched.size === 1 && !whole.length) {
    const name = bind([...matched][0]);
    const wanted = bind(equal.map((item) => item.value.toLowerCase()));
    value = `CASE WHEN lower(a.key) = ${name}::text
      THEN (SELECT coalesce(jsonb_agg(v.value), '[]'::jsonb)
              FROM jsonb_array_elements_text(a.value) AS v(value)
             WHERE lower(v.value) = ANY(${wanted}::text[]))
      ELSE a.value END`;
  }
  const named = `coalesce((SELECT jsonb_object_agg(a.key, ${value}) FROM jsonb_each(e.a) AS a
      WHERE lower(a.key) = ANY(${bind([...select.names])}::text[])), '{}'::jsonb)`;
  return [named, ...whole].join(" || ");
}

export const baseName = (name: string): string => (name.split(";")[0] ?? name).toLowerCase();

/** Which attributes a search returns: by lower-case name, and the all-user and all-operational marks. */
export interface Selection {
  readonly names: ReadonlySet<string>;
  readonly allUser: boolean;
  readonly allOperational: boolean;
  readonly computed: ReadonlySet<string>;
}

/** The attributes asked for, as LDAP reads the list: none means every user attribute. */
export function selection(
  schema: DirectorySchema,
  attributes: readonly string[] | undefined,
): Selection {
  const asked = attributes ?? [];
  const names = new Set<string>();
  let allUser = asked.length === 0;
  let allOperational = false;
  for (const name of asked) {
    if (name === "*") allUser = true;
    else if (name === "+") allOperational = true;
    else if (name !== "1.1") names.add(baseName(schema.canonical(baseName(name)) ?? name));
  }
  const computed = new Set(
    [...COMPUTED].filter((name) => allOperational || names.has(name.toLowerCase())),
  );
  return { names, allUser, allOperational, computed };
}

/** One row as the directory client gives an entry: the selected attributes, bytes for binary ones. */
export function entryOf(
  schema: DirectorySchema,
  row: EntryRow,
  select: Selection,
  binary: ReadonlySet<string>,
): DirectoryEntry {
  const attributes: Record<string, string[] | Buffer[]> = {};
  for (const [name, values] of Object.entries(row.values)) {
    const key = baseName(name);
    if (COMPUTED.has(key)) continue;
    const operational = schema.isOperational(name);
    const wanted = select.names.has(key) || (operational ? select.allOperational : select.allUser);
    if (!wanted || !Array.isArray(values)) continue;
    attributes[name] = binary.has(key)
      ? values.map((value) => Buffer.from(value, "base64"))
      : values;
  }
  if (select.computed.has("entrydn")) attributes.entryDN = [row.dn];
  if (select.computed.has("hassubordinates")) {
    attributes.hasSubordinates = [row.has_subordinates === true ? "TRUE" : "FALSE"];
  }
  return { dn: row.dn, attributes };
}
