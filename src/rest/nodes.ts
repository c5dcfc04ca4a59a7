import type { AttributeMap } from "../events/index.ts";
import { readStoredText } from "../capture/index.ts";
import { shownText } from "../directory/index.ts";
import { globalId } from "../history/index.ts";
import type { AttributeCatalog, AttributeInfo } from "./catalog.ts";
import { IDENTIFIER_KEYS, type FieldSelection } from "./fields.ts";

/**
 * A served value: text, a number, a boolean; binary values base64 text, but for those AD's
 * tools show as text (a SID as `S-1-5-21-…`, objectGUID as GUID text).
 */
export type AttributeValue = string | number | boolean;

/** The parts of an entry a node is made of. */
export interface EntryParts {
  readonly entryUUID: string;
  readonly dn: string;
  readonly attributes?: AttributeMap | null;
  readonly operational?: AttributeMap | null;
}

const IDENTIFIERS = new Set<string>(IDENTIFIER_KEYS);

const GENERALIZED_TIME =
  /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})?(\d{2})?(?:[.,](\d{1,9}))?(Z|[+-]\d{2}(?:\d{2})?)$/;

/** `20261122043500Z` → `2026-11-22T04:35:00Z`; undefined when it is not generalized time. */
export function generalizedTimeToIso(value: string): string | undefined {
  const match = GENERALIZED_TIME.exec(value);
  if (!match) return undefined;
  const [, y, mo, d, h, mi = "00", s = "00", fraction, zone] = match;
  const offset = zone === "Z" ? "Z" : `${zone!.slice(0, 3)}:${zone!.slice(3, 5) || "00"}`;
  const iso = `${y}-${mo}-${d}T${h}:${mi}:${s}${fraction ? `.${fraction}` : ""}${offset}`;
  return Number.isNaN(Date.parse(iso)) ? undefined : iso;
}

/**
 * One stored value (always text) as served: integers as numbers when they fit a double
 * exactly, booleans as true/false, generalized time as ISO 8601, AD's SIDs and objectGUID as
 * AD's tools show them; anything that does not read as its syntax says stays the text it is.
 */
export function serveValue(info: AttributeInfo | undefined, stored: string): AttributeValue {
  if (info?.binary) return info.shown === undefined ? stored : shownText(info.shown, stored);
  const value = readStoredText(stored);
  if (!info) return value;
  if (info.jsonType === "integer" && /^-?\d{1,16}$/.test(value)) {
    const number = Number(value);
    if (Number.isSafeInteger(number)) return number;
  }
  if (info.jsonType === "boolean") {
    if (value === "TRUE") return true;
    if (value === "FALSE") return false;
  }
  if (info.format === "date-time") return generalizedTimeToIso(value) ?? value;
  return value;
}

/** All of an attribute's values as served: one value (or null) if single-valued, else a list. */
export function serveAttribute(
  info: AttributeInfo | undefined,
  values: readonly string[] | null | undefined,
): AttributeValue | AttributeValue[] | null {
  if (values == null || values.length === 0) return null;
  if (info?.singleValued) return serveValue(info, values[0]!);
  return values.map((value) => serveValue(info, value));
}

/**
 * An entry as the channel serves it: `{ id, entryUUID, dn, type, ...attributes }`, with the
 * attributes `selection` asks for. `id` is the global ID (base64 of `<type>:<entryUUID>`).
 */
export function entryNode(
  entry: EntryParts,
  type: string,
  selection: FieldSelection,
  catalog: AttributeCatalog,
): Record<string, unknown> {
  const node: Record<string, unknown> = {
    id: globalId(type, entry.entryUUID),
    entryUUID: entry.entryUUID,
    dn: entry.dn,
    type,
  };
  // An attribute never hides an identifier (entryUUID is an operational attribute too), and a
  // redacted attribute is never served.
  const add = (
    name: string,
    values: readonly string[] | null | undefined,
    info = catalog.resolve(name),
  ) => {
    if (IDENTIFIERS.has(name) || catalog.isRedacted(name)) return;
    node[name] = serveAttribute(info, values);
  };
  if (selection.allUser) {
    for (const [name, values] of byName(entry.attributes)) add(name, values);
  }
  if (selection.allOperational) {
    for (const [name, values] of byName(entry.operational)) add(name, values);
  }
  for (const info of selection.names) {
    if (info.name in node) continue;
    const source = info.operational ? entry.operational : entry.attributes;
    add(info.name, source?.[info.name] ?? findIgnoringCase(source, info.name), info);
  }
  return node;
}

/** Attributes in alphabetical order, ignoring case (jsonb keeps its own order). */
function byName(map: AttributeMap | null | undefined): [string, string[]][] {
  return Object.entries(map ?? {}).sort(([a], [b]) => {
    const x = a.toLowerCase();
    const y = b.toLowerCase();
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/** Stored names are canonical, but an entry captured without a schema may spell one otherwise. */
function findIgnoringCase(map: AttributeMap | null | undefined, name: string) {
  if (!map) return undefined;
  const lower = name.toLowerCase();
  for (const [key, values] of Object.entries(map)) if (key.toLowerCase() === lower) return values;
  return undefined;
}
