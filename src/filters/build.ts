import type { FilterNode } from "./ast.ts";

/** `and` of several conditions; one condition stands alone. */
export function allOf(filters: readonly FilterNode[]): FilterNode {
  return filters.length === 1 && filters[0] ? filters[0] : { op: "and", filters };
}

/** `or` of several conditions; one condition stands alone. */
export function anyOf(filters: readonly FilterNode[]): FilterNode {
  return filters.length === 1 && filters[0] ? filters[0] : { op: "or", filters };
}

/**
 * The node for a value written with wildcards, given the pieces between them: `["a", "b", ""]`
 * for `a*b*`. Empty pieces carry nothing (`a**b` is `a*b`), and a value that is nothing but
 * wildcards only asks that the attribute have a value: `present`.
 */
export function wildcardNode(attribute: string, pieces: readonly string[]): FilterNode {
  const initial = pieces[0] ?? "";
  const final = pieces.length > 1 ? (pieces[pieces.length - 1] ?? "") : "";
  const any = pieces.slice(1, -1).filter((piece) => piece !== "");
  if (initial === "" && final === "" && any.length === 0) return { op: "present", attribute };
  return {
    op: "substring",
    attribute,
    ...(initial === "" ? {} : { initial }),
    any,
    ...(final === "" ? {} : { final }),
  };
}
