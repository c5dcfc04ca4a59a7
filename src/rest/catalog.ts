import type { Queryable } from "../db/index.ts";
import type { FilterNode } from "../filters/index.ts";
import type { DirectorySchema, ShownAs } from "../directory/index.ts";
import { parseLdapFilter } from "../filters/index.ts";
import { ENTRIES } from "../../projections/entries/index.ts";

/** What the channel knows of one attribute: how to name, check and serve its values. */
export interface AttributeInfo {
  /** The canonical name: `cn`, never `commonName` or `CN`. */
  readonly name: string;
  /** Served with `+`, kept in the `operational` column. */
  readonly operational: boolean;
  /** Served as one value rather than a list. */
  readonly singleValued: boolean;
  /** Values are bytes, served base64. */
  readonly binary: boolean;
  readonly jsonType: "string" | "integer" | "boolean";
  readonly format?: "date-time";
  /** Binary values served as AD's tools show them (`S-1-5-21-…`, GUID text), not base64. */
  readonly shown?: ShownAs;
}

/**
 * The attributes the channel knows, by any spelling: the directory schema's attribute types
 * when the schema could be read, otherwise the names found on the projected entries (then
 * every attribute is a multi-valued string). Redacted attributes are never known: they are
 * not in the log, and asking for them is asking for an unknown attribute.
 */
export class AttributeCatalog {
  readonly #byName = new Map<string, AttributeInfo>();
  readonly #hidden: ReadonlySet<string>;
  /** Built from the directory's schema (true) or from the names on the entries (false). */
  readonly fromSchema: boolean;

  constructor(infos: Iterable<AttributeInfo>, redacted: readonly string[], fromSchema: boolean) {
    const hidden = new Set(redacted.map((name) => name.toLowerCase()));
    for (const info of infos) {
      if (!hidden.has(info.name.toLowerCase())) this.#byName.set(info.name.toLowerCase(), info);
    }
    this.#hidden = hidden;
    this.fromSchema = fromSchema;
  }

  static fromDirectorySchema(schema: DirectorySchema, redacted: readonly string[]) {
    const catalog = new AttributeCatalog([], redacted, true);
    for (const type of schema.attributeTypes) {
      if (type.names.some((name) => catalog.isRedacted(name))) continue;
      const info: AttributeInfo = {
        name: type.names[0]!,
        operational: type.operational,
        singleValued: type.singleValued,
        binary: type.binary,
        jsonType: type.binary ? "string" : type.jsonType,
        ...(type.format === undefined ? {} : { format: type.format }),
        ...(type.shown === undefined ? {} : { shown: type.shown }),
      };
      for (const name of type.names) catalog.#byName.set(name.toLowerCase(), info);
      catalog.#byName.set(type.oid, info);
    }
    return catalog;
  }

  /**
   * A redacted attribute (by any of its names when the schema is known): never served, even
   * should a value have reached the projection some other way.
   */
  isRedacted(name: string): boolean {
    const base = (name.split(";")[0] ?? name).toLowerCase();
    return this.#hidden.has(base);
  }

  /** The attribute named `name` in any letter case (or by an alias or OID), if known. */
  resolve(name: string): AttributeInfo | undefined {
    const base = name.split(";")[0] ?? name;
    return this.#byName.get(base.toLowerCase());
  }

  /** Every known attribute once, by canonical name. */
  all(): AttributeInfo[] {
    const seen = new Map<string, AttributeInfo>();
    for (const info of this.#byName.values()) seen.set(info.name, info);
    return [...seen.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}

const genericInfo = (name: string, operational: boolean): AttributeInfo => ({
  name,
  operational,
  singleValued: false,
  binary: false,
  jsonType: "string",
});

/** How long a catalog read from the entries is reused. */
const OBSERVED_TTL_MS = 60_000;

/**
 * The catalog for a request: the schema's, fixed; or, without a schema, the attribute names
 * on the projected entries, read again at most once a minute.
 */
export function catalogSource(
  db: Queryable,
  schema: DirectorySchema | undefined,
  redacted: readonly string[],
): () => Promise<AttributeCatalog> {
  if (schema) {
    const catalog = AttributeCatalog.fromDirectorySchema(schema, redacted);
    return () => Promise.resolve(catalog);
  }
  let cached: { catalog: Promise<AttributeCatalog>; at: number } | undefined;
  return () => {
    if (!cached || Date.now() - cached.at > OBSERVED_TTL_MS) {
      const catalog = observedCatalog(db, redacted);
      cached = { catalog, at: Date.now() };
      catalog.catch(() => (cached = undefined));
    }
    return cached.catalog;
  };
}

async function observedCatalog(db: Queryable, redacted: readonly string[]) {
  const result = await db.query<{ name: string; operational: boolean }>(
    `SELECT DISTINCT name, false AS operational FROM ${ENTRIES}, jsonb_object_keys(attributes) AS name
     UNION
     SELECT DISTINCT name, true FROM ${ENTRIES}, jsonb_object_keys(operational) AS name`,
  );
  return new AttributeCatalog(
    result.rows.map((row) => genericInfo(row.name, row.operational)),
    redacted,
    false,
  );
}

/** The object classes a type's filter requires: `objectClass=x` not under a NOT or an OR. */
export function requiredObjectClasses(filter: string): string[] {
  let ast: FilterNode;
  try {
    ast = parseLdapFilter(filter);
  } catch {
    return [];
  }
  const classes: string[] = [];
  const visit = (node: FilterNode) => {
    if (node.op === "and") node.filters.forEach(visit);
    else if (node.op === "eq" && node.attribute.toLowerCase() === "objectclass") {
      classes.push(node.value);
    }
  };
  visit(ast);
  return classes;
}

/**
 * The user attributes an entry of a type may hold by its required object classes (MUST and
 * MAY, with superiors), for describing the type. Entries can hold more (auxiliary classes),
 * so this is what to expect, not a limit.
 */
export function typeAttributes(
  catalog: AttributeCatalog,
  schema: DirectorySchema | undefined,
  filter: string,
): AttributeInfo[] {
  if (!schema) return [];
  const names = schema.attributesOf(requiredObjectClasses(filter));
  const infos = names.flatMap((name) => {
    const info = catalog.resolve(name);
    return info && !info.operational ? [info] : [];
  });
  return [...new Map(infos.map((info) => [info.name, info])).values()].sort((a, b) =>
    a.name < b.name ? -1 : 1,
  );
}
