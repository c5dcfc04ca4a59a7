import { Attribute, Change, type Entry } from "ldapts";

/** An entry as annal reads it: every attribute as a list of values, binary ones as Buffers. */
export interface DirectoryEntry {
  readonly dn: string;
  readonly attributes: Record<string, string[] | Buffer[]>;
}

/** Values to write: one value, or several; Buffers for binary attributes such as jpegPhoto. */
export type AttributeValues = string | Buffer | readonly string[] | readonly Buffer[];

/** One change of a modify request (RFC 4511 §4.6). `delete` without values removes the attribute. */
export interface Modification {
  readonly operation: "add" | "delete" | "replace";
  readonly attribute: string;
  readonly values?: AttributeValues;
}

/** `jpegPhoto;binary` → `jpegphoto`: how binary attribute names are compared. */
export function baseName(attribute: string): string {
  return (attribute.split(";")[0] ?? attribute).toLowerCase();
}

/**
 * The `explicitBufferAttributes` list for ldapts. ldapts keeps an attribute's values as bytes
 * only when the returned name is in that list exactly, but the server spells names as its
 * schema does (`jpegPhoto`); ldapts would then decode valid UTF-8 bytes to a string (dropping
 * a leading byte-order mark). ldapts only ever asks the list `includes(name)`, so this list
 * answers ignoring case and options.
 */
export function binaryNameList(names: readonly string[] | undefined): string[] {
  const wanted = new Set((names ?? []).map(baseName));
  const list = [...(names ?? [])];
  Object.defineProperty(list, "includes", { value: (name: string) => wanted.has(baseName(name)) });
  return list;
}

/**
 * Converts an ldapts search entry. Attributes named in `binary` (any case) come back as
 * Buffers; others as strings, unless the server sent bytes that are not UTF-8, which stay
 * Buffers rather than being mangled. Requested attributes the entry lacks are left out.
 */
export function fromSearchEntry(entry: Entry, binary: ReadonlySet<string>): DirectoryEntry {
  const attributes: Record<string, string[] | Buffer[]> = {};
  for (const [name, raw] of Object.entries(entry)) {
    if (name === "dn") continue;
    const values = Array.isArray(raw) ? raw : [raw];
    if (values.length === 0) continue;
    if (binary.has(baseName(name)) || values.some((value) => Buffer.isBuffer(value))) {
      attributes[name] = values.map((value) =>
        Buffer.isBuffer(value) ? value : Buffer.from(value, "utf8"),
      );
    } else {
      attributes[name] = values as string[];
    }
  }
  return { dn: entry.dn, attributes };
}

/** One ldapts Attribute; a mix of strings and Buffers is sent as bytes. */
export function toAttribute(type: string, values: AttributeValues | undefined): Attribute {
  const list: (string | Buffer)[] =
    values === undefined
      ? []
      : typeof values === "string" || Buffer.isBuffer(values)
        ? [values]
        : [...values];
  const allStrings = list.every((value) => typeof value === "string");
  return new Attribute({
    type,
    values: allStrings
      ? (list as string[])
      : list.map((value) => (Buffer.isBuffer(value) ? value : Buffer.from(value, "utf8"))),
  });
}

export function toChange(modification: Modification): Change {
  return new Change({
    operation: modification.operation,
    modification: toAttribute(modification.attribute, modification.values),
  });
}
