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

/**
 * Base names by name as a server spells it. A directory sends the same few dozen names on
 * every entry, and a search of many entries asks for each name's base name twice per entry.
 * Emptied when full, so names that never repeat cannot grow it without bound.
 */
const baseNames = new Map<string, string>();
const BASE_NAMES_KEPT = 4096;

/** `jpegPhoto;binary` → `jpegphoto`: how binary attribute names are compared. */
export function baseName(attribute: string): string {
  let base = baseNames.get(attribute);
  if (base === undefined) {
    const options = attribute.indexOf(";");
    base = (options < 0 ? attribute : attribute.slice(0, options)).toLowerCase();
    if (baseNames.size >= BASE_NAMES_KEPT) baseNames.clear();
    baseNames.set(attribute, base);
  }
  return base;
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
  // Loops rather than Object.entries and closures: an import converts every entry of the
  // directory here, and each array made per attribute is garbage a moment later.
  const attributes: Record<string, string[] | Buffer[]> = {};
  for (const name of Object.keys(entry)) {
    if (name === "dn") continue;
    const raw = entry[name];
    const values = (Array.isArray(raw) ? raw : [raw]) as (string | Buffer)[];
    if (values.length === 0) continue;
    if (binary.has(baseName(name)) || someBuffer(values)) {
      const bytes: Buffer[] = new Array(values.length);
      for (let i = 0; i < values.length; i++) {
        const value = values[i]!;
        bytes[i] = Buffer.isBuffer(value) ? value : Buffer.from(value, "utf8");
      }
      attributes[name] = bytes;
    } else {
      attributes[name] = values as string[];
    }
  }
  return { dn: entry.dn, attributes };
}

function someBuffer(values: readonly (string | Buffer)[]): boolean {
  for (const value of values) if (typeof value !== "string") return true;
  return false;
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
