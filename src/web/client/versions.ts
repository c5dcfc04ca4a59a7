/**
 * An entry's versions from its change history: each change carries the RFC 6902 patch between
 * the entry's attributes before and after it (`{ cn: ["Ada"], ... }`, every value text), so
 * the versions are the patches applied in order to the state before the first change. Pure
 * functions, no DOM: the tests run them in Node.
 */

/** User attributes as the change patches see them: name → values, each value text. */
export type Attributes = Readonly<Record<string, readonly string[]>>;

export interface PatchOperation {
  readonly op: string;
  readonly path: string;
  readonly value?: unknown;
  readonly from?: string;
}

/** `/cn/0` → `["cn", "0"]` (RFC 6901 unescaping). */
export function pointerSegments(pointer: string): string[] {
  return pointer
    .split("/")
    .slice(1)
    .map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"));
}

const asValues = (value: unknown): string[] =>
  Array.isArray(value) ? value.map((v) => String(v)) : value == null ? [] : [String(value)];

/**
 * `state` with `patch` applied, as a new object (`state` is not changed). Patches are over
 * attributes holding lists of values: `/name` (the whole list) or `/name/<index>` (one value).
 * An operation that does not fit the state (a value removed twice) is skipped, not fatal: a
 * history page shows what it can.
 */
export function applyPatch(state: Attributes, patch: readonly PatchOperation[]): Attributes {
  const next: Record<string, string[]> = { ...(state as Record<string, string[]>) };
  const copied = new Set<string>();
  const values = (name: string): string[] => {
    if (!copied.has(name)) {
      next[name] = [...(next[name] ?? [])];
      copied.add(name);
    }
    return next[name]!;
  };
  for (const operation of patch) {
    const [name, index] = pointerSegments(operation.path);
    if (name === undefined || name === "") continue;
    switch (operation.op) {
      case "add":
      case "replace":
        if (index === undefined) {
          next[name] = asValues(operation.value);
          copied.add(name);
        } else {
          const list = values(name);
          const at = index === "-" ? list.length : Number(index);
          if (operation.op === "add") list.splice(at, 0, String(operation.value));
          else list[at] = String(operation.value);
        }
        break;
      case "remove":
        if (index === undefined) delete next[name];
        else values(name).splice(Number(index), 1);
        break;
      case "move":
      case "copy": {
        const [fromName] = pointerSegments(operation.from ?? "");
        if (fromName !== undefined && next[fromName]) {
          next[name] = [...next[fromName]!];
          if (operation.op === "move") delete next[fromName];
        }
        break;
      }
      default:
        break;
    }
  }
  for (const name of copied) if (next[name]?.length === 0) delete next[name];
  return next;
}

/** One change of the entry as the REST channel gives it (`include=nodes,patch`). */
export interface EntryChange {
  readonly changeId: string;
  readonly type: string;
  readonly dn: string;
  readonly occurredAt: string;
  readonly patch?: readonly PatchOperation[];
}

/**
 * The entry's attributes after each change, in the changes' order: `base` is the state before
 * the first (empty when the first is the entry's add), a delete leaves it empty.
 */
export function versionsOf(base: Attributes, changes: readonly EntryChange[]): Attributes[] {
  const versions: Attributes[] = [];
  let state = base;
  for (const change of changes) {
    state = change.type === "delete" ? {} : applyPatch(state, change.patch ?? []);
    versions.push(state);
  }
  return versions;
}

const IDENTIFIERS = new Set(["id", "entryUUID", "dn", "type"]);

/** A REST entry node (`{ id, entryUUID, dn, type, cn: "Ada", ... }`) as attributes. */
export function attributesOfNode(node: Readonly<Record<string, unknown>>): Attributes {
  const attributes: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(node)) {
    if (IDENTIFIERS.has(name) || value === null || value === undefined) continue;
    const list = Array.isArray(value) ? value : [value];
    attributes[name] = list.map((v) =>
      typeof v === "boolean" ? (v ? "TRUE" : "FALSE") : String(v),
    );
  }
  return attributes;
}

export interface AttributeDiff {
  readonly name: string;
  readonly before: readonly string[];
  readonly after: readonly string[];
  /** `added`, `removed`, `changed` or `same`. */
  readonly kind: "added" | "removed" | "changed" | "same";
  /** The values only `after` has, in its order. */
  readonly addedValues: readonly string[];
  /** The values only `before` has, in its order. */
  readonly removedValues: readonly string[];
  /** How many values both have. */
  readonly kept: number;
}

/** Every attribute of either version, by name (case-insensitive order), with how it differs. */
export function diffAttributes(before: Attributes, after: Attributes): AttributeDiff[] {
  const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort((a, b) =>
    a.localeCompare(b, "en", { sensitivity: "base" }),
  );
  return names.map((name) => {
    const a = before[name] ?? [];
    const b = after[name] ?? [];
    const { addedValues, removedValues, kept } = valueChanges(a, b);
    const kind =
      a.length === 0
        ? "added"
        : b.length === 0
          ? "removed"
          : addedValues.length === 0 && removedValues.length === 0
            ? "same"
            : "changed";
    return { name, before: a, after: b, kind, addedValues, removedValues, kept };
  });
}

/**
 * The values `after` adds to `before` and the ones it removes, as multisets (a value held twice
 * and then once is one removed): a group's `member` of hundreds shows the one that changed.
 */
export function valueChanges(
  before: readonly string[],
  after: readonly string[],
): { addedValues: string[]; removedValues: string[]; kept: number } {
  const left = new Map<string, number>();
  for (const value of before) left.set(value, (left.get(value) ?? 0) + 1);
  const addedValues: string[] = [];
  let kept = 0;
  for (const value of after) {
    const count = left.get(value) ?? 0;
    if (count > 0) {
      left.set(value, count - 1);
      kept++;
    } else addedValues.push(value);
  }
  const removedValues: string[] = [];
  for (const value of before) {
    const count = left.get(value) ?? 0;
    if (count > 0) {
      left.set(value, count - 1);
      removedValues.push(value);
    }
  }
  return { addedValues, removedValues, kept };
}

/** Whether a patch adds `dn` to (or removes it from) an attribute such as `member`. */
export function membershipIn(
  patch: readonly PatchOperation[],
  attribute: string,
  dn: string,
): "added" | "removed" | undefined {
  const wanted = dn.toLowerCase();
  for (const operation of patch) {
    const [name] = pointerSegments(operation.path);
    if (name?.toLowerCase() !== attribute.toLowerCase()) continue;
    const values = asValues(operation.value).map((v) => v.toLowerCase());
    if ((operation.op === "add" || operation.op === "replace") && values.includes(wanted)) {
      return "added";
    }
  }
  return undefined;
}
