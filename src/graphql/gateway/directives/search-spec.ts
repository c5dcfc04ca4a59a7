import { getNamedType, isInputObjectType } from "graphql";
import {
  and,
  InvalidDNError,
  parseDN,
  present,
  type SearchOptions,
} from "../../../directory/index.ts";
import { type FilterNode } from "../../../filters/index.ts";
import { parseLdapFilter } from "../../../filters/index.ts";
import {
  bySpec,
  checkedAttribute,
  qFilter,
  whereFilter,
  whereSpec,
  type WhereSpec,
} from "../where.ts";
import {
  needAttribute,
  siteError,
  textValuesOf,
  type DirectiveSite,
  type StepInput,
} from "./site.ts";

/**
 * Where a search directive looks: below a DN, below the DN in an attribute of the parent, or
 * below the directory's base (`[directory] base`; none without a directory).
 */
export type SearchBase =
  | { readonly kind: "dn"; readonly dn: string }
  | { readonly kind: "attribute"; readonly attribute: string }
  | { readonly kind: "directory"; readonly dn: string | undefined };

/** The parts of `@ldapFind`, `@ldapSearch` and the `@ldapFindBy…` directives read at build. */
export interface SearchSpec {
  readonly base: SearchBase;
  readonly scope: NonNullable<SearchOptions["scope"]>;
  /** The directive's own filter, ANDed with everything a query adds. */
  readonly filter: FilterNode | undefined;
  readonly qAttributes: readonly string[];
  readonly where: WhereSpec | undefined;
  readonly by: WhereSpec | undefined;
}

export function searchSpec(site: DirectiveSite): SearchSpec {
  const base = searchBase(site);
  const scope = (site.args.scope ?? "sub") as SearchSpec["scope"];
  let filter: FilterNode | undefined;
  if (typeof site.args.filter === "string") {
    try {
      filter = parseLdapFilter(site.args.filter);
    } catch (error) {
      throw siteError(
        site,
        `filter is not an RFC 4515 filter: ${(error as Error).message}`,
        "write it as (objectClass=inetOrgPerson), combining with (&...)(|...)(!...)",
      );
    }
  }
  const qAttributes = Array.isArray(site.args.qAttributes)
    ? (site.args.qAttributes as string[])
    : [];
  for (const name of qAttributes) {
    try {
      checkedAttribute(name);
    } catch (error) {
      throw siteError(site, `qAttributes: ${(error as Error).message}`);
    }
  }
  const argument = (name: string) => site.field.args.find((arg) => arg.name === name);
  if (argument("q") !== undefined && qAttributes.length === 0) {
    throw siteError(site, "the field has a q argument but the directive names no qAttributes");
  }
  return {
    base,
    scope,
    filter,
    qAttributes,
    where: inputSpec(site, argument("where")?.type, whereSpec),
    by: inputSpec(site, argument("by")?.type, bySpec),
  };
}

function inputSpec(
  site: DirectiveSite,
  type: Parameters<typeof getNamedType>[0] | undefined,
  read: typeof whereSpec,
): WhereSpec | undefined {
  if (type === undefined) return undefined;
  const named = getNamedType(type);
  if (!isInputObjectType(named)) throw siteError(site, `${String(type)} is not an input type`);
  try {
    const spec = read(named);
    for (const member of spec.members) checkedAttribute(member.attribute);
    return spec;
  } catch (error) {
    throw siteError(site, (error as Error).message);
  }
}

function searchBase(site: DirectiveSite): SearchBase {
  const base = site.args.base;
  if (base === undefined || base === null) {
    return { kind: "directory", dn: site.environment.directoryBase };
  }
  const text = String(base);
  if (text.startsWith("attribute:")) {
    const attribute = text.slice("attribute:".length);
    try {
      checkedAttribute(attribute);
    } catch (error) {
      throw siteError(site, `base: ${(error as Error).message}`);
    }
    needAttribute(site, attribute);
    return { kind: "attribute", attribute };
  }
  try {
    parseDN(text);
  } catch (error) {
    if (error instanceof InvalidDNError) {
      throw siteError(site, `base is neither a DN nor attribute:<name>: ${error.message}`);
    }
    throw error;
  }
  return { kind: "dn", dn: text };
}

/** The base DN of one search; undefined when the parent has no DN in the named attribute. */
export function baseDN(spec: SearchSpec, input: StepInput): string | undefined {
  switch (spec.base.kind) {
    case "dn":
    case "directory":
      return spec.base.dn;
    case "attribute":
      return textValuesOf(input.parent, spec.base.attribute)[0];
  }
}

/** The directive's filter ANDed with those of the `where`, `by` and `q` arguments. */
export function searchFilter(spec: SearchSpec, input: StepInput): FilterNode {
  const parts = [
    spec.filter,
    spec.where === undefined ? undefined : whereFilter(spec.where, input.args.where),
    spec.by === undefined ? undefined : whereFilter(spec.by, input.args.by, "by"),
    qFilter(input.args.q, spec.qAttributes),
  ].filter((part): part is FilterNode => part !== undefined);
  if (parts.length === 0) return present("objectClass");
  return parts.length === 1 ? parts[0]! : and(...parts);
}
