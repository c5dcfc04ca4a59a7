import type { AttributeCatalog, AttributeInfo } from "./catalog.ts";
import { commaList } from "./params.ts";

/**
 * Which attributes a response carries (`fields`). Every node has its identifiers (`id`,
 * `entryUUID`, `dn`, `type`) whatever is asked:
 *
 * - absent, or `*`: every user attribute the entry has;
 * - `+`: every operational attribute it has (`*,+` for both); a `+` left unencoded in the
 *   URL arrives as a space and is read as `+` all the same;
 * - `1.1`: no attributes, the identifiers only (ignored beside other names, as in LDAP);
 * - names (`cn,mail`, any letter case or alias): those, under their canonical names, in that
 *   order, `null` when the entry has none; may be mixed with `*` or `+`.
 *
 * Names of identifiers are accepted and add nothing. Unknown names are returned for the
 * caller to refuse (strict) or drop (lenient).
 */
export interface FieldSelection {
  readonly allUser: boolean;
  readonly allOperational: boolean;
  /** Explicitly named attributes, canonical, each once, in the order asked. */
  readonly names: readonly AttributeInfo[];
  /** The parameter held `*` or `+` (which export refuses). */
  readonly wildcard: boolean;
  /** The parameter was given. */
  readonly explicit: boolean;
}

export const IDENTIFIER_KEYS = ["id", "entryUUID", "dn", "type"] as const;
const IDENTIFIERS = new Set(IDENTIFIER_KEYS.map((key) => key.toLowerCase()));

export function parseFields(
  value: string | undefined,
  catalog: AttributeCatalog,
): { selection: FieldSelection; unknown: string[] } {
  if (value === undefined) {
    return {
      selection: {
        allUser: true,
        allOperational: false,
        names: [],
        wildcard: false,
        explicit: false,
      },
      unknown: [],
    };
  }
  let allUser = false;
  let allOperational = false;
  const names = new Map<string, AttributeInfo>();
  const unknown: string[] = [];
  // A `+` written unencoded in a query string arrives as a space: an item of blanks is `+`.
  const items = value.split(",").map((item) => (item !== "" && item.trim() === "" ? "+" : item));
  for (const item of commaList(items.join(","))) {
    if (item === "*") allUser = true;
    else if (item === "+") allOperational = true;
    else if (item === "1.1" || IDENTIFIERS.has(item.toLowerCase())) continue;
    else {
      const info = catalog.resolve(item);
      if (info === undefined) {
        if (!unknown.includes(item)) unknown.push(item);
      } else if (!IDENTIFIERS.has(info.name.toLowerCase())) {
        names.set(info.name, info);
      }
    }
  }
  return {
    selection: {
      allUser,
      allOperational,
      names: [...names.values()],
      wildcard: allUser || allOperational,
      explicit: true,
    },
    unknown,
  };
}

/** A stable description of a selection, for ETags. */
export function selectionKey(selection: FieldSelection): string {
  return [
    selection.allUser ? "*" : "",
    selection.allOperational ? "+" : "",
    ...selection.names.map((info) => info.name),
  ].join(",");
}
