import type { FilterNode } from "./ast.ts";
import { AnnalError } from "../errors/index.ts";
import { likePattern } from "./sql.ts";

export type IndexedSqlFilterOptions = {
  /**
   * The table of case-folded values (the entries projection's `entry_values`: `entry_uuid`,
   * `type`, `attribute`, `value_key`, `value_folded`), quoted and optionally schema-qualified.
   * Annal's own constant, never user input.
   */
  readonly valuesTable: string;
  /** The entry's uuid column in the outer query (`e.entry_uuid`); a plain identifier. */
  readonly entryColumn: string;
  /**
   * The parameter holding the type searched (`$1`): every value row compared is of it. Or the
   * types a table of annal's lists (`TypesIn`), read by the statement itself: no round trip
   * before it for the list, and no list out of date when it runs.
   */
  readonly typeParam: string | TypesIn | TypesOf;
  /** `typeParam` holds a list of types (`text[]`): value rows of any of them are compared. */
  readonly typeList?: boolean;
  /** How many characters of a folded value `value_key` holds (the rest in `value_folded`). */
  readonly keyLength: number;
  /** The query's parameters so far. Every name and value is pushed here and referenced as `$n`. */
  readonly params: unknown[];
  /**
   * Compile over the spans of the versions' values (`entry_version_values`: a value of an
   * entry from `valid_from` until `valid_to`) instead of the entries' values (`ValueSpans`).
   */
  readonly spans?: ValueSpans;
};

/**
 * The types listed in a table of annal's: `SELECT type FROM <table> WHERE attribute = <param>`
 * (the entries projection's `entry_value_counts`, with the row every typed entry counts in).
 */
export interface TypesIn {
  /** The table, quoted and optionally schema-qualified. */
  readonly table: string;
  /** The parameter holding the `attribute` of the rows that name the types. */
  readonly attributeParam: string;
}

/**
 * Every type a values table holds rows of (`typesOf`: `entry_version_values`, whose indexes
 * start with the type), read by the statement itself as a skip along that index: a probe per
 * type, whatever the table's size.
 */
export interface TypesOf {
  /** The values table, quoted and optionally schema-qualified. */
  readonly typesOf: string;
}

/**
 * The SQL array of the types a values table holds rows of (`TypesOf`): the smallest type, then
 * each next one above it, one probe of the index that starts with the type each.
 */
export function typesOfSql(table: string): string {
  if (!TABLE.test(table)) {
    throw new AnnalError(
      "ANNAL_FILTER_SQL_COLUMN",
      `filter: the values table ${JSON.stringify(table)} is not annal's own`,
      { status: 500 },
    );
  }
  return `ARRAY(WITH RECURSIVE t AS (
       SELECT (SELECT min(s.type) FROM ${table} AS s) AS type
       UNION ALL
       SELECT (SELECT min(s.type) FROM ${table} AS s WHERE s.type > t.type)
         FROM t WHERE t.type IS NOT NULL)
     SELECT t.type FROM t WHERE t.type IS NOT NULL)`;
}

/**
 * What a filter over the value spans matches, and when.
 *
 * - `{ at }`: the outer row is an entry's version valid at the moment `at` (a parameter), and
 *   only the spans valid then are read (`valid_from <= at < valid_to`): they are the values of
 *   that version, so an entry is matched by its uuid, as over `entry_values`, and the index
 *   ranges start at the moment.
 * - `{ from, to, ... }`: the outer row is any version of an entry (`versionColumn`, starting at
 *   `validFromColumn`), and only the spans valid in `[from, to)` are read (a side left out is
 *   open). A span holds for the versions that start within it (`versionsTable` is read for
 *   them), so sets of matches are of `(entry, version)`. A version that ended the moment it
 *   began may be taken for the one after it: such a version is valid at no moment, and the
 *   caller leaves it out.
 */
export type ValueSpans =
  | { readonly at: string }
  | {
      readonly from?: string;
      readonly to?: string;
      /** The versions table (`entry_versions`), quoted; annal's own constant. */
      readonly versionsTable: string;
      /** The version's number in the outer query (`v.version`); a plain identifier. */
      readonly versionColumn: string;
      /** The version's start in the outer query (`v.valid_from`); a plain identifier. */
      readonly validFromColumn: string;
    };

const COLUMN = /^[a-z_][a-z0-9_.]*$/;
const TABLE = /^("[a-z_][a-z0-9_]*"\.)?"[a-z_][a-z0-9_]*"$/;
const PARAM = /^\$[1-9][0-9]*$/;
const ALIAS = /^[a-z_][a-z0-9_]*$/;
const ORDERING = { ge: ">=", le: "<=", gt: ">", lt: "<" } as const;
/** The bound an index can use for a comparison whose exact test follows it. */
const LOOSE = { ge: ">=", le: "<=", gt: ">=", lt: "<=" } as const;

/**
 * Compiles a filter to a PostgreSQL boolean expression over an entry, answered from its
 * indexed values instead of its JSON: the same semantics as `compileFilterToSql` (any value
 * matches, letter case ignored by `lower()`, code-point order, `ILIKE` substrings), value for
 * value, but in a form the `entry_values` indexes serve. No name or value enters the SQL text.
 *
 * - A comparison is `<entry> IN (SELECT entry_uuid FROM values WHERE type = $t AND attribute =
 *   $a AND <test>)`, a semi-join the planner can start from the index (type, attribute,
 *   value_key) or probe per entry. An `or` of comparisons is one `IN` over their `UNION ALL`,
 *   an `and` of them one `IN` over their `INTERSECT`, so `(|(uid=a)(uid=b))` is two index
 *   lookups rather than a test of every entry, and `(&(sn=a)(givenName=b))` a merge of two
 *   index ranges. The equalities of an `or` on one attribute are one scan of the index over
 *   their values (`value_key = ANY(...)`): a hundred of them are one subquery, not a hundred.
 *   `not` is `NOT EXISTS`, an anti-join.
 * - `eq`/`approx`: `value_key = lower($v)`. The key holds a folded value's first `keyLength`
 *   characters, so for a value shorter than that (allowing `lower()` to triple its length)
 *   equality of keys is equality of values; a longer one is also compared whole.
 * - `ge`/`le`/`gt`/`lt`: the same reasoning holds for order: a short value compares with a
 *   key as with the whole value; a long one takes the loose bound on the key and the exact
 *   test on the whole value.
 * - `substring`: `coalesce(value_folded, value_key) LIKE lower($pattern)`, which is `value
 *   ILIKE $pattern` in a UTF-8 database (ILIKE folds both sides with `lower()`), served by the
 *   trigram index on that expression; with an initial piece also `value_key LIKE
 *   lower($initial%)`, which the planner turns into a range on the btree, and which alone
 *   decides a prefix with nothing after it.
 * - `present`: any row of the attribute. Values are never empty arrays.
 *
 * @example
 * ```ts
 * const params: unknown[] = ["user"];
 * const where = compileFilterToIndexedSql({ op: "eq", attribute: "uid", value: "U123" }, {
 *   valuesTable: ENTRY_VALUES, entryColumn: "e.entry_uuid", typeParam: "$1", keyLength: 200, params });
 * // where: e.entry_uuid IN (SELECT x.entry_uuid FROM "projection_entries"."entry_values" AS x
 * //          WHERE x.type = $1 AND x.attribute = $2::text AND x.value_key = lower($3::text))
 * ```
 */
export function compileFilterToIndexedSql(
  ast: FilterNode,
  options: IndexedSqlFilterOptions,
): string {
  return indexedFilter(options).compile(ast);
}

/**
 * The entries a filter matches as a query of their uuids over the values table alone (`SELECT
 * x.entry_uuid ...`, an entry once per matching value), when the filter has no `not` and no
 * empty `and` or `or` in it; otherwise undefined: those need every entry of the type. Cheap
 * to count from: each comparison is a range of one index.
 */
export function compileFilterToIndexedSet(
  ast: FilterNode,
  options: Omit<IndexedSqlFilterOptions, "entryColumn">,
): string | undefined {
  const filter = indexedFilter({ ...options, entryColumn: "e.entry_uuid" });
  return isIndexedSet(ast) ? filter.set(ast) : undefined;
}

/**
 * Whether a filter is an equality whose value a key holds whole (`keyLength` characters): a
 * point of the values index, which at most one value row of an entry meets (at a moment, one
 * span), so its rows come out of the index in entry order, each entry once.
 */
export function isPointTest(
  node: FilterNode,
  keyLength: number,
): node is Extract<FilterNode, { op: "eq" | "approx" }> {
  // lower() at most triples a character.
  return (node.op === "eq" || node.op === "approx") && [...node.value].length * 3 < keyLength;
}

/**
 * Whether `compileFilterToIndexedSet` gives a set for the filter: it has no `not` and no empty
 * `and` or `or` in it.
 */
export function isIndexedSet(node: FilterNode): boolean {
  switch (node.op) {
    case "not":
      return false;
    case "and":
    case "or":
      return node.filters.length > 0 && node.filters.every(isIndexedSet);
    default:
      return true;
  }
}

/** A comparison or substring of one attribute's values: what `compileValueTest` compiles. */
export type ValueTestNode = Exclude<FilterNode, { op: "and" | "or" | "not" | "present" }>;

/**
 * The test a comparison or substring applies to one row of the values table (alias `alias`,
 * a plain identifier), as `compileFilterToIndexedSql` applies it to each value: in a form the
 * btree on (type, attribute, value_key) serves as a range when it can (an equality, an
 * ordering, a substring with an initial piece). The row's type and attribute are the caller's
 * to bind. Undefined for a presence test, which every value passes. With `range`, only the
 * bound on the key that every value the test passes meets (a superset, for an index to read
 * from; undefined when there is none): the exact test on the whole value would otherwise draw
 * the planner to the trigram index, which gives no order.
 *
 * @example
 * ```ts
 * compileValueTest({ op: "eq", attribute: "sn", value: "Meyer" }, { alias: "k", keyLength: 200, params });
 * // k.value_key = lower($3::text)
 * ```
 */
export function compileValueTest(
  node: ValueTestNode | Extract<FilterNode, { op: "present" }>,
  options: {
    readonly alias: string;
    readonly keyLength: number;
    readonly params: unknown[];
    readonly range?: boolean;
  },
): string | undefined {
  const { alias, keyLength, params, range = false } = options;
  if (!ALIAS.test(alias)) {
    throw new AnnalError(
      "ANNAL_FILTER_SQL_COLUMN",
      `filter: the values alias ${JSON.stringify(alias)} is not annal's own`,
      { status: 500 },
    );
  }
  const bind = (value: string): string => `$${params.push(value)}::text`;
  /** Whether `lower(value)` surely fits in a key (lower() at most triples a character). */
  const fits = (value: string): boolean => [...value].length * 3 < keyLength;
  const key = `${alias}.value_key`;
  const whole = `coalesce(${alias}.value_folded, ${key})`;
  switch (node.op) {
    case "present":
      return undefined;
    case "eq":
    case "approx": {
      const value = bind(node.value);
      if (fits(node.value)) return `${key} = lower(${value})`;
      const bound = `${key} = left(lower(${value}), ${keyLength})`;
      return range ? bound : `${bound} AND ${whole} = lower(${value})`;
    }
    case "ge":
    case "le":
    case "gt":
    case "lt": {
      const value = bind(node.value);
      if (fits(node.value)) return `${key} ${ORDERING[node.op]} lower(${value})`;
      const bound = `${key} ${LOOSE[node.op]} left(lower(${value}), ${keyLength})`;
      return range ? bound : `${bound} AND ${whole} ${ORDERING[node.op]} lower(${value})`;
    }
    case "substring": {
      // A prefix alone that a key holds whole is decided by the key: the test on the whole
      // value would only draw the planner to the trigram index, which reads every match.
      const prefixOnly = node.any.length === 0 && node.final === undefined;
      const initial = node.initial !== undefined && fits(node.initial) ? node.initial : undefined;
      const exact =
        range || (prefixOnly && initial !== undefined)
          ? undefined
          : `${whole} LIKE lower(${bind(likePattern(node))})`;
      if (initial === undefined) return exact;
      const prefix = `${key} LIKE lower(${bind(likePattern({ initial, any: [] }))})`;
      return exact ? `${prefix} AND ${exact}` : prefix;
    }
  }
}

/** The compilers of one query's filter, binding to its parameters. */
function indexedFilter(options: IndexedSqlFilterOptions) {
  const { valuesTable, entryColumn, typeParam, keyLength, params, spans } = options;
  const type =
    typeof typeParam === "object"
      ? "typesOf" in typeParam
        ? `x.type = ANY(${typesOfSql(typeParam.typesOf)})`
        : `x.type = ANY(ARRAY(SELECT t.type FROM ${typeParam.table} AS t WHERE t.attribute = ${typeParam.attributeParam}::text))`
      : options.typeList
        ? `x.type = ANY(${typeParam}::text[])`
        : `x.type = ${typeParam}`;
  const period = spans && !("at" in spans) ? spans : undefined;
  if (
    (typeof typeParam === "object"
      ? "typesOf" in typeParam
        ? !TABLE.test(typeParam.typesOf)
        : !TABLE.test(typeParam.table) || !PARAM.test(typeParam.attributeParam)
      : !PARAM.test(typeParam)) ||
    (spans &&
      ("at" in spans
        ? !PARAM.test(spans.at)
        : !COLUMN.test(spans.versionColumn) ||
          !COLUMN.test(spans.validFromColumn) ||
          !TABLE.test(spans.versionsTable) ||
          (spans.from !== undefined && !PARAM.test(spans.from)) ||
          (spans.to !== undefined && !PARAM.test(spans.to)))) ||
    !TABLE.test(valuesTable) ||
    !COLUMN.test(entryColumn) ||
    !Number.isInteger(keyLength) ||
    keyLength < 1
  ) {
    throw new AnnalError(
      "ANNAL_FILTER_SQL_COLUMN",
      `filter: the values table ${JSON.stringify(valuesTable)}, entry column ${JSON.stringify(entryColumn)} or type parameter ${JSON.stringify(typeParam)} is not annal's own`,
      { status: 500 },
    );
  }
  const bind = (value: string): string => `$${params.push(value)}::text`;
  type Leaf = Exclude<FilterNode, { op: "and" | "or" | "not" }>;
  const test = (node: Leaf) => compileValueTest(node, { alias: "x", keyLength, params });
  // A span carries its validity: bounding it keeps an index range to the spans valid at the
  // moment or in the period (the match index's columns after the key: its end, then its start).
  const end = "coalesce(x.valid_to, 'infinity'::timestamptz)";
  const spanConditions = !spans
    ? []
    : "at" in spans
      ? [`x.valid_from <= ${spans.at}::timestamptz`, `${end} > ${spans.at}::timestamptz`]
      : [
          ...(spans.to === undefined ? [] : [`x.valid_from < ${spans.to}::timestamptz`]),
          ...(spans.from === undefined ? [] : [`${end} > ${spans.from}::timestamptz`]),
        ];
  /** What the outer query's row is matched by, and what a set of matches holds. */
  const outerKey = period ? `(${entryColumn}, ${period.versionColumn})` : entryColumn;
  const innerKey = period ? "w.entry_uuid, w.version" : "x.entry_uuid";
  // Over a period a span stands for the versions that start within it.
  const holding = period
    ? ` JOIN ${period.versionsTable} AS w ON w.entry_uuid = x.entry_uuid
         AND w.valid_from >= x.valid_from AND w.valid_from < ${end}`
    : "";
  const sameRow = period
    ? `x.entry_uuid = ${entryColumn} AND x.valid_from <= ${period.validFromColumn}
       AND ${end} > ${period.validFromColumn}`
    : `x.entry_uuid = ${entryColumn}`;
  const rows = (node: Leaf, join = ""): string => {
    const attribute = `x.attribute = ${bind(node.attribute)}`;
    const condition = test(node);
    const conditions = [type, attribute, ...spanConditions];
    if (condition) conditions.push(condition);
    return `FROM ${valuesTable} AS x${join} WHERE ${conditions.join(" AND ")}`;
  };
  type Comparison = Extract<FilterNode, { value: string }>;
  const point = (node: FilterNode): node is Comparison => isPointTest(node, keyLength);
  /**
   * The entries with any of the values of one attribute: one range of the index per value,
   * read by one scan whatever their number. A batched lookup ORs a hundred equalities: as a
   * hundred subqueries they cost PostgreSQL more to plan (30 ms) than to run, and their text
   * and parameters as much again to send.
   */
  const points = (attribute: string, nodes: readonly Comparison[]): string => {
    const name = `x.attribute = ${bind(attribute)}`;
    const values = `$${params.push(nodes.map((node) => node.value))}::text[]`;
    const keys = `x.value_key = ANY(ARRAY(SELECT lower(v) FROM unnest(${values}) AS v))`;
    const conditions = [type, name, ...spanConditions, keys];
    return `SELECT ${innerKey} FROM ${valuesTable} AS x${holding} WHERE ${conditions.join(" AND ")}`;
  };
  /** An `or`'s parts: its equalities by attribute (those of two or more as one), the rest. */
  const alternatives = (filters: readonly FilterNode[]): string[] => {
    const byAttribute = new Map<string, Comparison[]>();
    for (const node of filters.filter(point)) {
      byAttribute.set(node.attribute, [...(byAttribute.get(node.attribute) ?? []), node]);
    }
    return filters.flatMap((node) => {
      const same = point(node) ? byAttribute.get(node.attribute)! : [];
      if (same.length < 2) return [set(node)];
      return same[0] === node ? [points(node.attribute, same)] : [];
    });
  };
  /** A settable node's entry uuids. */
  const set = (node: FilterNode): string => {
    switch (node.op) {
      case "not":
        throw new Error("set: a not is no set");
      case "and":
      case "or": {
        if (node.filters.length === 1) return set(node.filters[0]!);
        const parts = node.op === "or" ? alternatives(node.filters) : node.filters.map(set);
        if (parts.length === 1) return parts[0]!;
        return parts
          .map((part) => `(${part})`)
          .join(node.op === "and" ? " INTERSECT " : " UNION ALL ");
      }
      default:
        return `SELECT ${innerKey} ${rows(node, holding)}`;
    }
  };
  const compile = (node: FilterNode): string => {
    switch (node.op) {
      case "and": {
        if (node.filters.length === 0) return "TRUE";
        // Two or more sets are intersected before they meet the entries: each set comes out
        // of its index in entry order, so the intersection is a merge that stops with the
        // page. Separate semi-joins made the planner walk every entry of the type in uuid
        // order and probe both sets, since it takes the conjunction for rarer than it is.
        const sets = node.filters.filter(isIndexedSet);
        if (sets.length < 2) return `(${node.filters.map(compile).join(" AND ")})`;
        const rest = node.filters.filter((part) => !isIndexedSet(part)).map(compile);
        const intersection = `${outerKey} IN (${sets.map((part) => `(${set(part)})`).join(" INTERSECT ")})`;
        return `(${[intersection, ...rest].join(" AND ")})`;
      }
      case "or": {
        if (node.filters.length === 0) return "FALSE";
        if (isIndexedSet(node)) return `${outerKey} IN (${set(node)})`;
        return `(${node.filters.map(compile).join(" OR ")})`;
      }
      case "not":
        if (node.filter.op !== "and" && node.filter.op !== "or" && node.filter.op !== "not") {
          return `NOT EXISTS (SELECT 1 ${rows(node.filter)} AND ${sameRow})`;
        }
        return `NOT (${compile(node.filter)})`;
      default:
        return `${outerKey} IN (SELECT ${innerKey} ${rows(node, holding)})`;
    }
  };
  return { compile, set };
}
