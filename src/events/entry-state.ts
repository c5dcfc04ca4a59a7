import { createPatch, type Operation } from "rfc6902";
import type { AttributeMap, EntryState } from "./entry.ts";

/** One change to an entry's attributes, as a modify request or the accesslog states it. */
export interface AttributeChange {
  readonly operation: "add" | "delete" | "replace" | "increment";
  readonly attribute: string;
  readonly values: readonly string[];
}

/**
 * Applies modify semantics (RFC 4511 §4.6) to a copy of `attributes`: add merges values
 * (a value already present stays once), delete without values removes the attribute and with
 * values removes those, replace sets (no values = remove), increment adds to a number.
 * Attribute names are matched case-insensitively and keep the existing spelling.
 */
export function applyChanges(
  attributes: AttributeMap,
  changes: readonly AttributeChange[],
): AttributeMap {
  const result: AttributeMap = structuredClone(attributes);
  for (const change of changes) {
    const name = findName(result, change.attribute) ?? change.attribute;
    const current = result[name] ?? [];
    let next: string[];
    switch (change.operation) {
      case "add":
        next = [...current, ...change.values.filter((v) => !current.includes(v))];
        break;
      case "delete":
        next = change.values.length === 0 ? [] : current.filter((v) => !change.values.includes(v));
        break;
      case "replace":
        next = [...new Set(change.values)];
        break;
      case "increment": {
        const by = Number(change.values[0] ?? 0);
        next = current.map((v) => String(Number(v) + by));
        break;
      }
    }
    if (next.length === 0) delete result[name];
    else result[name] = next;
  }
  return result;
}

function findName(attributes: AttributeMap, name: string): string | undefined {
  const lower = name.toLowerCase();
  return Object.keys(attributes).find((key) => key.toLowerCase() === lower);
}

/** Attributes sorted by name, values kept in directory order: one canonical JSON shape. */
export function sortAttributes(attributes: AttributeMap): AttributeMap {
  // Array.prototype.sort's default order compares UTF-16 code units, as `<` does.
  const names = Object.keys(attributes).sort();
  const sorted: Record<string, string[]> = {};
  for (const name of names) sorted[name] = attributes[name]!;
  return sorted;
}

/** The RFC 6902 patch that turns `before`'s user attributes into `after`'s. */
export function patchBetween(before: EntryState | null, after: EntryState | null): Operation[] {
  return createPatch(before?.attributes ?? {}, after?.attributes ?? {});
}

/** Names of the user attributes whose values differ between the two states. */
export function touchedAttributes(before: EntryState | null, after: EntryState | null): string[] {
  const a = before?.attributes ?? {};
  const b = after?.attributes ?? {};
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...names].filter((name) => JSON.stringify(a[name]) !== JSON.stringify(b[name])).sort();
}

/**
 * Whether two attribute maps hold the same values. Key order is not compared: a state read
 * back from the log comes out of jsonb, which orders keys its own way.
 */
export function sameAttributes(a: AttributeMap, b: AttributeMap): boolean {
  return (
    touchedAttributes({ attributes: a } as EntryState, { attributes: b } as EntryState).length === 0
  );
}

/** Case-insensitive set of attribute names. */
export class NameSet {
  private readonly names: Set<string>;
  constructor(names: Iterable<string>) {
    this.names = new Set([...names].map((n) => n.toLowerCase()));
  }
  has(name: string): boolean {
    return this.names.has((name.split(";")[0] ?? name).toLowerCase());
  }
}
