import type { GraphqlConfig } from "../../config/index.ts";
import { filterAttributes, type FilterNode } from "../../filters/index.ts";
import { isDescendantOf, matchesFilter } from "../../directory/index.ts";
import { parseLdapFilter } from "../../filters/index.ts";
import type { EntryObject } from "./entry.ts";
import { GatewaySchemaError } from "../errors.ts";

interface EntryType {
  readonly base: string | undefined;
  readonly objectClass: readonly string[];
  readonly filter: FilterNode | undefined;
}

/**
 * `[graphql.types]`: what the directory means by a GraphQL type, for creating and moving
 * entries (`base`, `objectClass`) and for telling an entry's type behind a union or interface.
 */
export class EntryTypes {
  readonly #types: ReadonlyMap<string, EntryType>;

  constructor(config: GraphqlConfig["types"]) {
    const types = new Map<string, EntryType>();
    for (const [name, type] of Object.entries(config)) {
      let filter: FilterNode | undefined;
      if (type.filter !== undefined) {
        try {
          filter = parseLdapFilter(type.filter);
        } catch (error) {
          throw new GatewaySchemaError(
            `[graphql.types.${name}] filter is not an LDAP filter: ${(error as Error).message}`,
            { hint: "write an RFC 4515 filter such as (objectClass=inetOrgPerson)", cause: error },
          );
        }
      }
      types.set(name, { base: type.base, objectClass: type.objectClass, filter });
    }
    this.#types = types;
  }

  base(typeName: string): string | undefined {
    return this.#types.get(typeName)?.base;
  }

  objectClasses(typeName: string): readonly string[] {
    return this.#types.get(typeName)?.objectClass ?? [];
  }

  /**
   * Whether `entry` is of `typeName`, for a mutation that may touch only entries of its type:
   * below the type's `base` when one is configured, with all its `objectClass` values and
   * matching its `filter`; a type configured with none of those, or not at all, when its
   * name is one of the entry's object classes (ignoring case).
   */
  holds(typeName: string, entry: EntryObject): boolean {
    const type = this.#types.get(typeName);
    if (type?.base !== undefined && !isDescendantOf(entry.dn, type.base)) return false;
    if (type !== undefined && (type.objectClass.length > 0 || type.filter !== undefined)) {
      return this.infer(entry, [typeName]) === typeName;
    }
    if (type?.base !== undefined) return true;
    return entry
      .textValues("objectClass")
      .some((name) => name.toLowerCase() === typeName.toLowerCase());
  }

  /** Attributes the type checks need on every entry. */
  attributes(): string[] {
    const names = new Set(["objectClass"]);
    for (const type of this.#types.values()) {
      if (type.filter !== undefined)
        for (const name of filterAttributes(type.filter)) names.add(name);
    }
    return [...names];
  }

  /**
   * The first of `candidates` the entry is of: a configured type whose object classes it all
   * has and whose filter it matches; a type without configuration when its name is one of the
   * entry's object classes (ignoring case).
   */
  infer(entry: EntryObject, candidates: readonly string[]): string | undefined {
    const classes = new Set(entry.textValues("objectClass").map((name) => name.toLowerCase()));
    for (const candidate of candidates) {
      const type = this.#types.get(candidate);
      if (type === undefined) {
        if (classes.has(candidate.toLowerCase())) return candidate;
        continue;
      }
      if (!type.objectClass.every((name) => classes.has(name.toLowerCase()))) continue;
      if (type.objectClass.length === 0 && type.filter === undefined) continue;
      if (
        type.filter !== undefined &&
        !matchesFilter(type.filter, textAttributes(entry, type.filter))
      ) {
        continue;
      }
      return candidate;
    }
    return undefined;
  }
}

function textAttributes(entry: EntryObject, filter: FilterNode): Record<string, string[]> {
  const attributes: Record<string, string[]> = {};
  for (const name of filterAttributes(filter)) attributes[name] = entry.textValues(name);
  return attributes;
}
