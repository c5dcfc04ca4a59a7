import type { AttributeCatalog } from "./catalog.ts";
import { commaList } from "./params.ts";

/**
 * One key of `sort`: an attribute (by its first value, ignoring case, in code-point order),
 * `dn` (normalised), or `entryUUID`. Entries without the attribute come last in either
 * direction, as LDAP's server-side sort puts them (RFC 2891).
 */
export interface SortKey {
  readonly kind: "attribute" | "dn" | "entryUUID";
  /** The canonical attribute name, `dn` or `entryUUID`. */
  readonly name: string;
  readonly operational: boolean;
  readonly descending: boolean;
}

/**
 * Reads `sort`: comma-separated keys, `-` before a key for descending (`sn,-cn`). A key given
 * twice counts once, where it first appears. Unknown attribute names are returned for the
 * caller to refuse (strict) or drop (lenient).
 */
export function parseSort(
  value: string | undefined,
  catalog: AttributeCatalog,
): { keys: SortKey[]; unknown: string[]; malformed: string[] } {
  const keys: SortKey[] = [];
  const unknown: string[] = [];
  const malformed: string[] = [];
  for (const item of commaList(value ?? "")) {
    const descending = item.startsWith("-");
    const name = item.replace(/^[-+]/, "").trim();
    if (name === "" || /[^A-Za-z0-9;._-]/.test(name)) {
      malformed.push(item);
      continue;
    }
    let key: SortKey | undefined;
    if (name.toLowerCase() === "dn") {
      key = { kind: "dn", name: "dn", operational: false, descending };
    } else if (name.toLowerCase() === "entryuuid") {
      key = { kind: "entryUUID", name: "entryUUID", operational: false, descending };
    } else {
      const info = catalog.resolve(name);
      if (info)
        key = { kind: "attribute", name: info.name, operational: info.operational, descending };
    }
    if (!key) {
      if (!unknown.includes(name)) unknown.push(name);
    } else if (!keys.some((k) => k.name === key.name)) {
      keys.push(key);
    }
  }
  return { keys, unknown, malformed };
}
