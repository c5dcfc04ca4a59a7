import { createPatch, type Operation } from "rfc6902";
import type { AttributeMap, EntryState } from "./entry.ts";

/** One change to an entry's attributes, as a modify request or the accesslog states it. */
export interface AttributeChange {
  readonly operation: "add" | "delete" | "replace" | "increment";
  readonly attribute: string;
  readonly values: readonly string[];
}

/**
 * Applies modify semantics (RFC 4511 §4.6) to `attributes`, returning a new map: add merges
 * values (a value already present stays once), delete without values removes the attribute
 * and with values removes those, replace sets (no values = remove), increment adds to a
 * number. Attribute names are matched case-insensitively and keep the existing spelling.
 * Neither `attributes` nor its arrays are changed: an attribute the changes leave alone keeps
 * its array in the result (a group of 100,000 members is not copied for a change to its
 * description, nor scanned by a hash set for a change of one member).
 */
export function applyChanges(
  attributes: AttributeMap,
  changes: readonly AttributeChange[],
): AttributeMap {
  const result: Record<string, string[]> = { ...attributes } as Record<string, string[]>;
  for (const change of changes) {
    const name = findName(result, change.attribute) ?? change.attribute;
    const current = result[name] ?? [];
    let next: string[];
    switch (change.operation) {
      case "add":
        next = withAdded(current, change.values);
        break;
      case "delete":
        next = change.values.length === 0 ? [] : withoutValues(current, change.values);
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

/** Up to this many values, a change looks each up by a scan rather than building a set. */
const FEW_VALUES = 16;

/** `current` and each of `values` it lacks (once), in order. */
function withAdded(current: readonly string[], values: readonly string[]): string[] {
  const fresh = [...new Set(values)];
  if (fresh.length <= FEW_VALUES) {
    const missing = fresh.filter((value) => !current.includes(value));
    return missing.length === 0 ? (current as string[]) : [...current, ...missing];
  }
  const present = new Set(current);
  return [...current, ...fresh.filter((value) => !present.has(value))];
}

/**
 * `current` without `values`. A few are found each by `indexOf` and the rest copied around them
 * in pieces: filtering 100,000 members by a callback each, to remove one, took 4 ms.
 */
function withoutValues(current: readonly string[], values: readonly string[]): string[] {
  if (values.length <= FEW_VALUES) {
    const at: number[] = [];
    for (const value of values) {
      for (let i = current.indexOf(value); i >= 0; i = current.indexOf(value, i + 1)) at.push(i);
    }
    if (at.length === 0) return current as string[];
    at.sort((a, b) => a - b);
    let result: string[] = [];
    let from = 0;
    for (const i of at) {
      if (i < from) continue; // a value given twice
      result = result.concat(current.slice(from, i));
      from = i + 1;
    }
    return result.concat(current.slice(from));
  }
  const removed = new Set(values);
  return current.filter((value) => !removed.has(value));
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

/**
 * The RFC 6902 patch that turns `before`'s user attributes into `after`'s. rfc6902 diffs two
 * arrays by their edit distance, recursing once per value: right for the few values most
 * attributes have, and beyond the stack for a group of 100,000 members (a one-member change to
 * it could not be recorded). An attribute with more values than `SMALL_ARRAY` on both sides
 * is diffed as the set of values it is (`largeArrayPatch`), in one pass.
 */
export function patchBetween(before: EntryState | null, after: EntryState | null): Operation[] {
  const a = before?.attributes ?? {};
  const b = after?.attributes ?? {};
  const large = Object.keys(b).filter(
    (name) => a[name] !== undefined && a[name].length + b[name]!.length > SMALL_ARRAY,
  );
  if (large.length === 0) return createPatch(a, b);
  const rest = (attributes: AttributeMap) =>
    Object.fromEntries(Object.entries(attributes).filter(([name]) => !large.includes(name)));
  return [
    ...createPatch(rest(a), rest(b)),
    ...large.flatMap((name) => largeArrayPatch(`/${pointerToken(name)}`, a[name]!, b[name]!)),
  ];
}

/** Values of an attribute, both sides together, up to which rfc6902's own diff is used. */
const SMALL_ARRAY = 2000;

/**
 * The patch from `before` to `after`, two arrays of distinct values: each value `after` lacks
 * removed (from the last, so the indexes hold), then each value `before` lacked added at its
 * place. Where the values both hold are not in the same order (or a value is there twice), the
 * attribute is replaced whole: still exact, only longer.
 */
export function largeArrayPatch(
  path: string,
  before: readonly string[],
  after: readonly string[],
): Operation[] {
  // What both begin and end with stays where it is: a change of a few members to a large
  // group is found by comparing, without a set of 100,000 values on each side.
  let head = 0;
  const shorter = Math.min(before.length, after.length);
  while (head < shorter && before[head] === after[head]) head++;
  let tail = 0;
  while (
    tail < shorter - head &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail]
  ) {
    tail++;
  }
  if (head + tail === before.length && head + tail === after.length) return [];
  if (head > 0 || tail > 0) {
    const middle = largeArrayMiddle(
      path,
      before.slice(head, before.length - tail),
      after.slice(head, after.length - tail),
      head,
    );
    return middle ?? [{ op: "replace", path, value: [...after] }];
  }
  return largeArrayMiddle(path, before, after, 0) ?? [{ op: "replace", path, value: [...after] }];
}

/**
 * The operations that turn `before` into `after` where both stand at `offset` in the whole
 * attribute, or undefined where they must be replaced whole (order changed, a value twice).
 */
function largeArrayMiddle(
  path: string,
  before: readonly string[],
  after: readonly string[],
  offset: number,
): Operation[] | undefined {
  const kept = new Set(after);
  const had = new Set(before);
  if (kept.size !== after.length || had.size !== before.length) return undefined;
  const operations: Operation[] = [];
  const remaining: string[] = [];
  for (let i = before.length - 1; i >= 0; i--) {
    if (!kept.has(before[i]!)) operations.push({ op: "remove", path: `${path}/${offset + i}` });
  }
  for (const value of before) if (kept.has(value)) remaining.push(value);
  let next = 0;
  for (let j = 0; j < after.length; j++) {
    const value = after[j]!;
    if (next < remaining.length && remaining[next] === value) next++;
    else if (!had.has(value)) {
      operations.push({ op: "add", path: `${path}/${offset + j}`, value });
    } else return undefined;
  }
  return next === remaining.length ? operations : undefined;
}

/** An attribute name as a JSON Pointer token (RFC 6901: `~` as `~0`, `/` as `~1`). */
function pointerToken(name: string): string {
  return name.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** Names of the user attributes whose values differ between the two states. */
export function touchedAttributes(before: EntryState | null, after: EntryState | null): string[] {
  const a = before?.attributes ?? {};
  const b = after?.attributes ?? {};
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...names].filter((name) => !sameValues(a[name], b[name])).sort();
}

/** Whether two attributes hold the same values in the same order (or both are absent). */
function sameValues(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
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
