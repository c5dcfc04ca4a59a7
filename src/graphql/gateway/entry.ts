import { entryIdentity, type DirectoryEntry, type IdentitySetting } from "../../directory/index.ts";

/**
 * A directory entry as a GraphQL parent object. Attribute names are matched ignoring case, and
 * `dn` (or `entryDN`) reads the entry's DN. `typeName` is set when the field that produced the
 * entry says which GraphQL type it is (`resolvedType`, or a field of an object type); without
 * it a union or interface infers the type from the entry (see `entry-types.ts`).
 */
export class EntryObject {
  readonly dn: string;
  readonly typeName: string | undefined;
  readonly #attributes: ReadonlyMap<string, readonly (string | Buffer)[]>;

  private constructor(
    dn: string,
    attributes: ReadonlyMap<string, readonly (string | Buffer)[]>,
    typeName: string | undefined,
  ) {
    this.dn = dn;
    this.#attributes = attributes;
    this.typeName = typeName;
  }

  static from(entry: DirectoryEntry, typeName?: string): EntryObject {
    const attributes = new Map<string, readonly (string | Buffer)[]>();
    for (const name in entry.attributes) {
      attributes.set(lowerCase(name), entry.attributes[name]!);
    }
    return new EntryObject(entry.dn, attributes, typeName);
  }

  /** The same entry, known to be of `typeName` (unchanged when that is undefined). */
  as(typeName: string | undefined): EntryObject {
    if (typeName === undefined || typeName === this.typeName) return this;
    return new EntryObject(this.dn, this.#attributes, typeName);
  }

  /** Every value of `attribute`, `[]` when the entry has none. */
  values(attribute: string): readonly (string | Buffer)[] {
    const name = lowerCase(attribute);
    if (name === "dn" || name === "entrydn") return [this.dn];
    return this.#attributes.get(name) ?? this.#attributes.get(name.split(";")[0]!) ?? [];
  }

  /** The values as text (binary ones as UTF-8), for matching and type inference. */
  textValues(attribute: string): string[] {
    return this.values(attribute).map((value) =>
      typeof value === "string" ? value : value.toString("utf8"),
    );
  }
}

/**
 * Attribute names in lower case, remembered: every value of every entry is stored and looked
 * up by its lower-case name, and the names are few (the schema's and the directory's).
 * Bounded; cleared whole when full.
 */
const lowerNames = new Map<string, string>();
const LOWER_NAMES_MAX = 10_000;

function lowerCase(name: string): string {
  let lower = lowerNames.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (lowerNames.size >= LOWER_NAMES_MAX) lowerNames.clear();
    lowerNames.set(name, lower);
  }
  return lower;
}

/**
 * The entry's identity (`[directory] identity`) as UUID text, as the log, REST and GraphQL's
 * `entryUUID` write it, from the values it was read with (`identityAttributes`: bytes or
 * GUID text for objectGUID); undefined when it has none.
 */
export function identityOfEntry(entry: EntryObject, setting: IdentitySetting): string | undefined {
  return entryIdentity(setting, (name) => {
    const values = entry.values(name);
    if (values.length === 0) return undefined;
    return values.map((value) =>
      typeof value === "string" ? value : value.toString(name === "objectGUID" ? "base64" : "utf8"),
    );
  });
}

export function isEntry(value: unknown): value is EntryObject {
  return value instanceof EntryObject;
}

/**
 * The values a parent object holds under `name`: an entry's attribute values, or a plain
 * object's property (an array as it is, a missing one as `[]`).
 */
export function valuesOf(parent: unknown, name: string): readonly unknown[] {
  if (isEntry(parent)) return parent.values(name);
  if (parent === null || typeof parent !== "object") return [];
  const value = (parent as Record<string, unknown>)[name];
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}
