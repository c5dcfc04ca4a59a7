import type { FilterNode } from "./ast.ts";

/** What a refusal of a NUL says to do. */
export const NUL_HINT = "remove the NUL character (U+0000): PostgreSQL text cannot hold it";

/**
 * Whether an attribute name or value of the filter holds U+0000, which PostgreSQL text cannot
 * (SQLSTATE 22021 on the query that binds it). Every channel refuses such a filter as the
 * caller's mistake before it reaches SQL: the REST `filter` parameter, GraphQL's `where`,
 * `by` and `q`.
 *
 * @example
 * ```ts
 * holdsNul({ op: "eq", attribute: "uid", value: "ada\u0000" }); // true
 * ```
 */
export function holdsNul(node: FilterNode): boolean {
  switch (node.op) {
    case "and":
    case "or":
      return node.filters.some(holdsNul);
    case "not":
      return holdsNul(node.filter);
    case "present":
      return node.attribute.includes("\u0000");
    case "substring":
      return [node.attribute, node.initial ?? "", node.final ?? "", ...node.any].some((text) =>
        text.includes("\u0000"),
      );
    default:
      return node.attribute.includes("\u0000") || node.value.includes("\u0000");
  }
}
