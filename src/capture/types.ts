import { normalizeDN, parseDN } from "../directory/index.ts";
import type { FilterNode } from "../filters/index.ts";
import { matchesFilter } from "../directory/match.ts";
import type { AttributeMap } from "../events/index.ts";

export interface EntryTypeRule {
  readonly name: string;
  readonly base: string;
  readonly filter: FilterNode;
}

/** A DN as its normalised RDNs, entry first: `["uid=a", "ou=people", ...]`. */
const rdnsOf = (dn: string): string[] => parseDN(dn).map((rdn) => normalizeDN([rdn]));

/**
 * "An entry belongs to the first type whose base and filter it matches": the base entry and
 * everything below it count as under the base. Bases are parsed once; each entry's DN once
 * per call (capture and import call this for every entry they see).
 */
export function entryTypeResolver(rules: readonly EntryTypeRule[]) {
  const compiled = rules.map((rule) => ({ ...rule, base: rdnsOf(rule.base) }));
  return (dn: string, attributes: AttributeMap): string | null => {
    let rdns: string[];
    try {
      rdns = rdnsOf(dn);
    } catch {
      return null; // not a DN we can place under any base
    }
    for (const rule of compiled) {
      const offset = rdns.length - rule.base.length;
      const under = offset >= 0 && rule.base.every((rdn, i) => rdns[offset + i] === rdn);
      if (under && matchesFilter(rule.filter, attributes)) return rule.name;
    }
    return null;
  };
}
