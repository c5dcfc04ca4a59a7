import type { FilterNode } from "./ast.ts";

/**
 * The canonical spelling of an attribute name, or `undefined` when the entry type has no such
 * attribute. Expected to ignore letter case, as LDAP attribute names do; see
 * {@link caseInsensitiveAttributes}.
 */
export type AttributeResolver = (name: string) => string | undefined;

/** `(&)` of RFC 4526: matches every entry. An `and` of nothing. */
export const ABSOLUTE_TRUE: FilterNode = Object.freeze({ op: "and", filters: Object.freeze([]) });
/** `(|)` of RFC 4526: matches no entry. An `or` of nothing. */
export const ABSOLUTE_FALSE: FilterNode = Object.freeze({ op: "or", filters: Object.freeze([]) });

export type CheckedFilter = {
  /** The filter with canonical attribute names and no condition on an unknown attribute. */
  readonly ast: FilterNode;
  /** Unknown names as written, each once, in order of first appearance. Empty when all known. */
  readonly unknown: string[];
};

/**
 * Resolves every attribute name of a filter to its canonical spelling and takes out the
 * conditions on attributes the entry type does not have.
 *
 * The lenient rule: an unknown attribute is an attribute no entry has. A comparison or
 * substring match on it and `present` of it are false, so `NOT` of them is true; the result is
 * then simplified (`false AND x` is false, `false OR x` is x, and so on), down to
 * {@link ABSOLUTE_FALSE} or {@link ABSOLUTE_TRUE} when nothing known is left. That is what the
 * same filter would select if the attribute were known and empty on every entry, so a misspelt
 * name narrows a search honestly instead of being dropped and widening it.
 *
 * Strict handling (`Prefer: handling=strict`) is the caller's: refuse when `unknown` is not empty.
 *
 * @example
 * ```ts
 * const known = caseInsensitiveAttributes(["cn", "sn", "mail"]);
 * checkAttributes(parseFilter("CN = ann OR shoeSize = 9").ast, known);
 * // { ast: { op: "eq", attribute: "cn", value: "ann" }, unknown: ["shoeSize"] }
 * ```
 */
export function checkAttributes(ast: FilterNode, known: AttributeResolver): CheckedFilter {
  const unknown = new Set<string>();
  const resolve = (node: FilterNode): FilterNode => {
    switch (node.op) {
      case "and":
      case "or": {
        const absorbing = node.op === "and" ? ABSOLUTE_FALSE : ABSOLUTE_TRUE;
        const neutral = node.op === "and" ? ABSOLUTE_TRUE : ABSOLUTE_FALSE;
        const filters: FilterNode[] = [];
        for (const child of node.filters.map(resolve)) {
          if (isConstant(child, absorbing)) return absorbing;
          if (!isConstant(child, neutral)) filters.push(child);
        }
        if (filters.length === node.filters.length) return { op: node.op, filters };
        if (filters.length === 0) return neutral;
        return filters.length === 1 && filters[0] ? filters[0] : { op: node.op, filters };
      }
      case "not": {
        const filter = resolve(node.filter);
        if (isConstant(filter, ABSOLUTE_TRUE)) return ABSOLUTE_FALSE;
        if (isConstant(filter, ABSOLUTE_FALSE)) return ABSOLUTE_TRUE;
        return { op: "not", filter };
      }
      default: {
        const attribute = known(node.attribute);
        if (attribute !== undefined) return { ...node, attribute };
        unknown.add(node.attribute);
        return ABSOLUTE_FALSE;
      }
    }
  };
  const resolved = resolve(ast);
  return { ast: resolved, unknown: [...unknown] };
}

function isConstant(node: FilterNode, constant: FilterNode): boolean {
  return node.op === constant.op && "filters" in node && node.filters.length === 0;
}

/**
 * A resolver over a fixed list of canonical names that ignores letter case:
 * `caseInsensitiveAttributes(["givenName"])("GIVENNAME")` is `"givenName"`.
 */
export function caseInsensitiveAttributes(names: Iterable<string>): AttributeResolver {
  const byLowerCase = new Map<string, string>();
  for (const name of names) byLowerCase.set(name.toLowerCase(), name);
  return (name) => byLowerCase.get(name.toLowerCase());
}
