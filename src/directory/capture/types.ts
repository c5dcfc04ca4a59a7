import { isDescendantOf, dnEquals } from "../dn.ts";
import type { FilterNode } from "../filter-ast.ts";
import { matchesFilter } from "../match.ts";
import type { AttributeMap } from "./events.ts";

export interface EntryTypeRule {
  readonly name: string;
  readonly base: string;
  readonly filter: FilterNode;
}

/**
 * "An entry belongs to the first type whose base and filter it matches": the base entry and
 * everything below it count as under the base.
 */
export function entryTypeResolver(rules: readonly EntryTypeRule[]) {
  return (dn: string, attributes: AttributeMap): string | null => {
    for (const rule of rules) {
      const under = dnEquals(dn, rule.base) || isDescendantOf(dn, rule.base);
      if (under && matchesFilter(rule.filter, attributes)) return rule.name;
    }
    return null;
  };
}
