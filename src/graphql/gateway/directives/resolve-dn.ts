import { isObjectType } from "graphql";
import { connection, pageRequest } from "../../connection.ts";
import { loadEntries } from "./ldap-find.ts";
import { connectionNodeType } from "./ldap-search.ts";
import { getPossibleTypeNames } from "./types.ts";
import {
  dnsIn,
  needAttribute,
  NOTHING,
  readSourceOf,
  shapeOf,
  siteError,
  textValuesOf,
  type DirectiveCompiler,
  type DirectiveSite,
  type StepInput,
} from "./site.ts";
import type { EntryObject } from "../entry.ts";

function dnSource(site: DirectiveSite): (input: StepInput) => string[] {
  const path = typeof site.args.path === "string" ? site.args.path : undefined;
  if (path !== undefined) needAttribute(site, path);
  if (path === undefined && site.position === 0) {
    throw siteError(
      site,
      "is first on the field and has no path",
      'name the attribute: path: "member"',
    );
  }
  // The value resolved before wins; first in the chain, the parent's attribute `path`.
  return (input) =>
    input.value !== NOTHING || path === undefined
      ? dnsIn(input.value === NOTHING ? undefined : input.value)
      : textValuesOf(input.parent, path);
}

/**
 * `@resolveDn(path)`: DN values to entries by base search, batched per request. A single field
 * resolves the first DN; a list field every DN (entries that do not exist are left out).
 */
export const resolveDn: DirectiveCompiler = (site) => {
  const dns = dnSource(site);
  const shape = shapeOf(site.field);
  const reads = readSourceOf(site);
  return (input) => loadEntries(input, dns(input), shape.list, shape.concrete, reads);
};

/**
 * `@resolveDnConnection(path, resolvedType)`: DN values as a Connection, paged over the DN
 * list; only the page's DNs are read. With `resolvedType` the nodes are of that type;
 * without it, each node's type is told from its entry (`[graphql.types]`, objectClass).
 */
export const resolveDnConnection: DirectiveCompiler = (site) => {
  const dns = dnSource(site);
  const node = connectionNodeType(site);
  const resolvedType =
    typeof site.args.resolvedType === "string" ? site.args.resolvedType : undefined;
  if (resolvedType !== undefined) {
    const type = site.environment.schema.getType(resolvedType);
    const nodeType = site.environment.schema.getType(node.name)!;
    if (!isObjectType(type))
      throw siteError(site, `resolvedType ${resolvedType} is not an object type`);
    if (!getPossibleTypeNames(site.environment.schema, nodeType).includes(resolvedType)) {
      throw siteError(
        site,
        `resolvedType ${resolvedType} is not a type of the connection's nodes (${node.name})`,
      );
    }
  }
  const typeName = resolvedType ?? (node.concrete ? node.name : undefined);
  const scope = `${site.owner.name}.${site.field.name}`;
  return async (input) => {
    const all = dns(input);
    const page = pageRequest(input.args, scope);
    const window = all.slice(page.offset, page.offset + page.first);
    const nodes = (await loadEntries(input, window, true, typeName)) as EntryObject[];
    return connection(nodes, page, all.length > page.offset + page.first, scope, () => all.length);
  };
};
