import type { EntryChange } from "../events/index.ts";
import { normalizeDN, type Modification } from "../directory/index.ts";

/**
 * A directory write, as the simulation reports it: one the deployed version made (a captured
 * change its instance caused) or one the simulated definition would have made (what its
 * recorder was asked). Values are shown where they are known; writes are compared by
 * `writeKey`, which leaves values out, since a captured change and a request say them differently.
 */
export interface DirectoryWrite {
  readonly operation: "add" | "modify" | "modrdn" | "delete";
  readonly dn: string;
  /** The attributes it touches (a modify's; an add's are its entry's). */
  readonly attributes: readonly string[];
  /** Per attribute, the values added and removed (a modify), where known. */
  readonly values?: Readonly<
    Record<string, { readonly added?: readonly string[]; readonly removed?: readonly string[] }>
  >;
  /** The step that made it, or would have. */
  readonly step: string | null;
  /** The DN the write is (or would be) made as: the approver a step acts for. */
  readonly as: string | null;
  readonly at: string;
}

/** What makes two writes the same one: the operation, the entry, and a modify's attributes. */
export function writeKey(write: DirectoryWrite): string {
  const attributes =
    write.operation === "modify"
      ? ` ${[...write.attributes]
          .map((a) => a.toLowerCase())
          .sort()
          .join(",")}`
      : "";
  return `${write.operation} ${normalDN(write.dn)}${attributes}`;
}

/** Writes in `a` with no counterpart in `b` (each of `b` counts once). */
export function writesMissingFrom(
  a: readonly DirectoryWrite[],
  b: readonly DirectoryWrite[],
): DirectoryWrite[] {
  const left = new Map<string, number>();
  for (const write of b) left.set(writeKey(write), (left.get(writeKey(write)) ?? 0) + 1);
  return a.filter((write) => {
    const key = writeKey(write);
    const count = left.get(key) ?? 0;
    if (count === 0) return true;
    left.set(key, count - 1);
    return false;
  });
}

/** A captured change the deployed version caused, as a write. */
export function capturedWrite(
  change: EntryChange,
  at: Date,
  step: string | null,
  as: string | null,
): DirectoryWrite {
  const operation = change.changeType;
  const dn = operation === "modrdn" ? (change.oldDn ?? change.dn) : change.dn;
  const values: Record<string, { added: string[]; removed: string[] }> = {};
  if (operation === "modify") {
    for (const attribute of change.attributes) {
      const before = valuesOf(change.before?.attributes, attribute);
      const after = valuesOf(change.after?.attributes, attribute);
      values[attribute] = {
        added: after.filter((v) => !before.includes(v)),
        removed: before.filter((v) => !after.includes(v)),
      };
    }
  }
  return {
    operation,
    dn,
    attributes:
      operation === "add" ? Object.keys(change.after?.attributes ?? {}) : [...change.attributes],
    ...(operation === "modify" ? { values } : {}),
    step,
    as,
    at: at.toISOString(),
  };
}

/** A modify request, as a write. */
export function requestedModify(
  dn: string,
  changes: readonly Modification[],
  step: string | null,
  as: string | null,
  at: Date,
): DirectoryWrite {
  const values: Record<string, { added?: string[]; removed?: string[] }> = {};
  for (const change of changes) {
    const list = textValues(change.values);
    const entry = (values[change.attribute] ??= {});
    if (change.operation === "add") entry.added = [...(entry.added ?? []), ...list];
    else if (change.operation === "delete") entry.removed = [...(entry.removed ?? []), ...list];
    else entry.added = list;
  }
  return {
    operation: "modify",
    dn,
    attributes: [...new Set(changes.map((c) => c.attribute))],
    values,
    step,
    as,
    at: at.toISOString(),
  };
}

/** A write for the table: `modify cn=on-call,... member +uid=ada,...`. */
export function describeWrite(write: DirectoryWrite): string {
  const changes = Object.entries(write.values ?? {})
    .map(([attribute, { added = [], removed = [] }]) =>
      [attribute, ...added.map((v) => `+${v}`), ...removed.map((v) => `-${v}`)].join(" "),
    )
    .join("; ");
  return `${write.operation} ${write.dn}${changes ? ` ${changes}` : ""}`;
}

function textValues(values: Modification["values"]): string[] {
  if (values === undefined) return [];
  const list = Array.isArray(values) ? values : [values];
  return list.map((v: unknown) => (Buffer.isBuffer(v) ? `<${v.length} bytes>` : String(v)));
}

function valuesOf(attributes: Record<string, string[]> | undefined, name: string): string[] {
  if (!attributes) return [];
  const key = Object.keys(attributes).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? [] : attributes[key]!;
}

function normalDN(dn: string): string {
  try {
    return normalizeDN(dn);
  } catch {
    return dn.toLowerCase();
  }
}
