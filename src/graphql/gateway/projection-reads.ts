import type { Queryable } from "../../db/index.ts";
import {
  filterAsStored,
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
import { KnownValues, LARGE_STORED_BYTES } from "./known-values.ts";
import {
  baseName,
  COMPUTED,
  entryOf,
  selection,
  valuesSql,
  type EntryRow,
  type RowValues,
  type Selection,
} from "./row-values.ts";

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

/** What each source's searches keep of rows whose stored attributes are large. */
const knownValues = new WeakMap<ProjectionSource, KnownValues>();

function knownValuesOf(source: ProjectionSource): KnownValues {
  let store = knownValues.get(source);
  if (store === undefined) knownValues.set(source, (store = new KnownValues()));
  return store;
}

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
          // An extensible match (AD's IN_CHAIN) is the directory's to answer.
          const filter = options.extensibleMatch
            ? undefined
            : coveredFilter(source, base, dn, options);
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
export function coveredFilter(
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
  // `objectSid: "S-1-5-21-…"` compares with the bytes the log keeps, as AD itself reads it.
  return unknown.length === 0
    ? filterAsStored(ast, (name) => source.schema.shownAs(name))
    : undefined;
}

/**
 * The scope's condition on `e.dn_norm` below the normalised DN `base`, binding what it needs.
 * Below the base is a `LIKE` of the base's suffix (its special characters escaped), which
 * PostgreSQL estimates from the column's histogram: the `right(...)` it replaces was guessed at
 * half a percent of the entries whatever the base, so a page of a search that matches most of
 * them was planned as a sort of every match rather than a walk that stops with the page.
 */
export function scopeSql(
  scope: NonNullable<SearchOptions["scope"]>,
  base: string,
  bind: (value: unknown) => string,
): string {
  const below = () => `e.dn_norm LIKE ${bind(`%,${base.replace(/[\\%_]/g, "\\$&")}`)}::text`;
  switch (scope) {
    case "base":
      return `e.dn_norm = ${bind(base)}::text`;
    case "children":
      return below();
    case "one":
      // The entries whose parent is the base: one range of the index of parents.
      return `${parentDnSql("e.dn_norm")} = ${bind(base)}::text`;
    case "sub":
      return `(e.dn_norm = ${bind(base)}::text OR ${below()})`;
  }
}

/**
 * The entries in scope that match, as `e` with the entries' columns (and `a`, user and
 * operational attributes, NULL for the typed ones): the typed ones by the value index
 * (`entry_values`), as the REST channel filters, the untyped ones (containers, for the most
 * part: the index holds no rows of them) by their JSON, with the same semantics.
 *
 * Each part is ordered and limited by `window` on its own: the planner then walks the typed
 * entries along the index of `created_position` and stops with the page when most of them
 * match, or sorts the few matches an index range finds. Over the two parts at once it could do
 * neither and sorted every match before the limit (4,900 of them for a page of 101 people).
 */
export function matchingEntries(
  scope: string,
  filter: FilterNode,
  params: unknown[],
  window: (alias: string) => string,
): string {
  const indexed = compileFilterToIndexedSql(filter, {
    valuesTable: ENTRY_VALUES,
    entryColumn: "e.entry_uuid",
    // A gateway search spans every type, and the index's ranges start with the type: the
    // types it holds rows of (each typed entry has a row named `ENTRY_ROW_ATTRIBUTE`, counted
    // per type), read by the statement itself.
    typeParam: typesIn(params),
    keyLength: VALUE_KEY_LENGTH,
    params,
  });
  const json = compileFilterToSql(filter, { attributesColumn: "u.a", params });
  return `((SELECT e.*, NULL::jsonb AS a FROM ${ENTRIES} AS e
             WHERE e.type IS NOT NULL AND ${scope} AND ${indexed} ${window("e")})
           UNION ALL
           (SELECT u.* FROM (SELECT e.*, e.attributes || e.operational AS a FROM ${ENTRIES} AS e
                              WHERE e.type IS NULL AND ${scope}) AS u
             WHERE ${json} ${window("u")})) AS e`;
}

/** The types `entry_values` holds rows of, read by the statement itself (`TypesIn`). */
function typesIn(params: unknown[]): { table: string; attributeParam: string } {
  return { table: ENTRY_VALUE_COUNTS, attributeParam: `$${params.push(ENTRY_ROW_ATTRIBUTE)}` };
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
  const scope = scopeSql(options.scope ?? "sub", normalizeDN(dn), bind);
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
  const values = valuesSql(
    select,
    options.matchedValues,
    bind,
    {
      valuesTable: ENTRY_VALUES,
      countsTable: ENTRY_VALUE_COUNTS,
      rowAttribute: ENTRY_ROW_ATTRIBUTE,
    },
    options.matchedValuesAsAsked,
  );
  yield* readPages(source, options, select, params, {
    ...values,
    subordinates,
    from: (window) => matchingEntries(scope, filter, params, window),
  });
}

/**
 * Reads a search's matches page after page, in the directory's order (creation order,
 * `created_position`), as the directory sends a search: pages of `options.pageSize` (at most
 * `PAGE_MAX`) until `options.sizeLimit` entries or the last match, or, with `paged: false`,
 * every entry up to the size limit at once. `from` is the statement's `FROM …` over entries
 * `e`, given the window of the page (`ORDER BY … LIMIT …` over an alias, which a relation of
 * several parts may apply to each); `values` and `subordinates` its columns, `with` its common
 * table expressions, bound in `params`.
 */
export async function* readPages(
  source: ProjectionSource,
  options: SearchOptions,
  select: Selection,
  params: unknown[],
  statement: RowValues & {
    readonly subordinates: string;
    readonly from: (window: (alias: string) => string) => string;
  },
): AsyncGenerator<DirectoryEntry[], void, undefined> {
  // Rows whose values (but the matched ones) are known from an earlier search are not read
  // again: their stored attributes are large. A typed row's key: its entry and version.
  const { known } = statement;
  const store = known === undefined ? undefined : knownValuesOf(source);
  const kept = known === undefined ? new Map() : store!.of(known.signature);
  let values = statement.values;
  let extra = "";
  if (known !== undefined) {
    const rowKey = `CASE WHEN e.type IS NOT NULL THEN e.entry_uuid::text || '/' || e.version END`;
    const keys = `$${params.push([...kept.keys()])}::text[]`;
    values = `CASE WHEN ${rowKey} = ANY(${keys}) THEN ${known.values} ELSE ${values} END`;
    extra = `, ${rowKey} AS row_key, pg_column_size(e.attributes) AS stored`;
  }
  const limit = options.sizeLimit ?? null;
  const pageSize = Math.max(1, Math.min(options.pageSize ?? PAGE_MAX, PAGE_MAX));
  const count$ = `$${params.push(limit)}::bigint`;
  const offset$ = `$${params.push(0)}::bigint`;
  const countParam = params.length - 2;
  const offsetParam = params.length - 1;
  const order = (alias: string) => `ORDER BY ${alias}.created_position, ${alias}.entry_uuid`;
  // A part reads up to the page's end: the page's rows may all come from it.
  const from = statement.from((alias) => `${order(alias)} LIMIT ${count$} + ${offset$}`);
  const common = statement.with?.length ? `WITH ${statement.with.join(", ")} ` : "";
  const sql = `${common}SELECT e.dn, ${values} AS values, ${statement.subordinates} AS has_subordinates${extra}
      FROM ${from}
     ${order("e")}
     LIMIT ${count$} OFFSET ${offset$}`;
  const binary = new Set((options.binaryAttributes ?? []).map((name) => baseName(name)));
  const paged = options.paged !== false;
  for (let offset = 0; ;) {
    const count = limit === null ? pageSize : Math.min(pageSize, limit - offset);
    if (count <= 0) return;
    params[countParam] = paged ? count : limit;
    params[offsetParam] = offset;
    const result = await source.db.query<EntryRow>(sql, params);
    if (result.rows.length > 0) {
      yield result.rows.map((row) => {
        const before = row.row_key == null ? undefined : kept.get(row.row_key);
        if (before !== undefined) row = { ...row, values: { ...before, ...row.values } };
        else if (known && row.row_key != null && Number(row.stored) >= LARGE_STORED_BYTES) {
          const { [known.matched ?? ""]: _matched, ...others } = row.values;
          store!.keep(known.signature, row.row_key, others);
        }
        return entryOf(source.schema, row, select, binary);
      });
    }
    offset += result.rows.length;
    if (!paged || result.rows.length < count) return;
  }
}
