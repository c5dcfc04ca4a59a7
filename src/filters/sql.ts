import type { FilterNode } from "./ast.ts";
import { AnnalError } from "../errors/index.ts";

export type SqlFilterOptions = {
  /**
   * The jsonb column holding the entry's attributes as `{"<canonicalName>": ["value", ...]}`
   * (values always arrays of strings; binary values base64). A trusted identifier from annal's
   * own code, optionally qualified (`e.attributes`); never user input.
   */
  readonly attributesColumn: string;
  /** The query's parameters so far. Every name and value is pushed here and referenced as `$n`. */
  readonly params: unknown[];
};

const COLUMN = /^[a-z_][a-z0-9_.]*$/;

/**
 * Compiles a filter to a PostgreSQL boolean expression over the attributes column, for a
 * `WHERE` clause. No attribute name or value ever enters the SQL text: each is appended to
 * `params` and the text refers to it as `$n`.
 *
 * Matching, per comparison, holds when ANY value of the attribute matches (LDAP semantics for
 * multi-valued attributes), and ignores letter case like LDAP's caseIgnoreMatch, the equality
 * rule of cn, sn, mail and most directory attributes:
 *
 * - `eq` and `approx`: `lower(value) = lower($n)`. Approximate match is equality ignoring case;
 *   PostgreSQL has no portable phonetic match. Unlike caseIgnoreMatch, blanks are significant.
 * - `substring`: `value ILIKE $n`, the pattern built here from the pieces with `%`, `_` and `\`
 *   escaped (backslash is ILIKE's default escape character).
 * - `ge`, `le`, `gt`, `lt`: text ordering of the lower-cased values in code-point order
 *   (`COLLATE "C"`), the same on every server. Numbers compare correctly only when they have the
 *   same number of digits: "9" > "10".
 * - `present`: the attribute has a key in the object (`column ? $n`); values are never empty arrays.
 * - `and` / `or` of nothing (RFC 4526 `(&)` / `(|)`): `TRUE` / `FALSE`. An `or`'s equalities
 *   on one attribute are one test against the list of their values.
 *
 * The column is assumed NOT NULL (a NULL column would make `NOT (column ? $n)` NULL).
 *
 * @example
 * ```ts
 * const params: unknown[] = [];
 * const where = compileFilterToSql({ op: "eq", attribute: "sn", value: "Smith" },
 *   { attributesColumn: "e.attributes", params });
 * // where: EXISTS (SELECT 1 FROM jsonb_array_elements_text(e.attributes -> $1::text) AS v(value)
 * //          WHERE lower(v.value) = lower($2::text))
 * // params: ["sn", "Smith"]
 * ```
 */
export function compileFilterToSql(ast: FilterNode, options: SqlFilterOptions): string {
  const { attributesColumn: column, params } = options;
  if (!COLUMN.test(column)) {
    throw new AnnalError(
      "ANNAL_FILTER_SQL_COLUMN",
      `filter: attributes column ${JSON.stringify(column)} is not a plain lower-case identifier`,
      { status: 500 },
    );
  }
  const bind = (value: string): string => {
    params.push(value);
    return `$${params.length}::text`;
  };
  const anyValue = (attribute: string, condition: () => string): string => {
    const values = `jsonb_array_elements_text(${column} -> ${bind(attribute)}) AS v(value)`;
    return `EXISTS (SELECT 1 FROM ${values} WHERE ${condition()})`;
  };
  type Comparison = Extract<FilterNode, { value: string }>;
  const equality = (node: FilterNode): node is Comparison =>
    node.op === "eq" || node.op === "approx";
  /**
   * An `or`'s parts, its equalities on one attribute as one test of its values against a list:
   * a batched lookup ORs a hundred of them, which as a hundred subqueries cost more to plan
   * than to run.
   */
  const alternatives = (filters: readonly FilterNode[]): string[] => {
    const byAttribute = new Map<string, Comparison[]>();
    for (const node of filters.filter(equality)) {
      byAttribute.set(node.attribute, [...(byAttribute.get(node.attribute) ?? []), node]);
    }
    return filters.flatMap((node) => {
      const same = equality(node) ? byAttribute.get(node.attribute)! : [];
      if (same.length < 2) return [compile(node)];
      if (same[0] !== node) return [];
      return [
        anyValue(node.attribute, () => {
          params.push(same.map((item) => item.value));
          return `lower(v.value) = ANY(ARRAY(SELECT lower(w) FROM unnest($${params.length}::text[]) AS w))`;
        }),
      ];
    });
  };
  const compile = (node: FilterNode): string => {
    switch (node.op) {
      case "and":
        if (node.filters.length === 0) return "TRUE";
        return `(${node.filters.map(compile).join(" AND ")})`;
      case "or":
        if (node.filters.length === 0) return "FALSE";
        return `(${alternatives(node.filters).join(" OR ")})`;
      case "not":
        return `NOT (${compile(node.filter)})`;
      case "present":
        return `(${column} ? ${bind(node.attribute)})`;
      case "substring":
        return anyValue(node.attribute, () => `v.value ILIKE ${bind(likePattern(node))}`);
      case "eq":
      case "approx":
        return anyValue(node.attribute, () => `lower(v.value) = lower(${bind(node.value)})`);
      case "ge":
      case "le":
      case "gt":
      case "lt": {
        const operator = ORDERING[node.op];
        return anyValue(
          node.attribute,
          () => `lower(v.value) ${operator} lower(${bind(node.value)}) COLLATE "C"`,
        );
      }
    }
  };
  return compile(ast);
}

const ORDERING = { ge: ">=", le: "<=", gt: ">", lt: "<" } as const;

/** `initial%any1%any2%final`, each piece with LIKE's special characters escaped. */
export function likePattern(node: {
  readonly initial?: string;
  readonly any: readonly string[];
  readonly final?: string;
}): string {
  return [node.initial ?? "", ...node.any, node.final ?? ""]
    .map((piece) => piece.replace(/[\\%_]/g, "\\$&"))
    .join("%");
}
