import { getNamedType, isObjectType } from "graphql";
import { DirectoryError, renderFilter } from "../../../directory/index.ts";
import type { FilterNode } from "../../../filters/index.ts";
import { connection, pageRequest } from "../../connection.ts";
import { EntryObject } from "../entry.ts";
import { baseDN, searchFilter, searchSpec, type SearchSpec } from "./search-spec.ts";
import type { ReadSource } from "../../context.ts";
import {
  directoryOf,
  readSourceOf,
  siteError,
  type DirectiveCompiler,
  type DirectiveSite,
  type StepInput,
} from "./site.ts";

/** The node type of a Connection field: the named type of its `nodes`. */
export function connectionNodeType(site: DirectiveSite): { name: string; concrete: boolean } {
  const named = getNamedType(site.field.type);
  const nodes = isObjectType(named) ? named.getFields().nodes : undefined;
  if (nodes === undefined) {
    throw siteError(
      site,
      `the field's type ${named.name} is not a connection (an object type with nodes)`,
      `declare the field as ${named.name.replace(/Connection$/, "")}Connection; annal defines <X>Connection when the schema does not`,
    );
  }
  const node = getNamedType(nodes.type);
  return { name: node.name, concrete: isObjectType(node) };
}

/**
 * Reads at most `limit` entries of a search, in the directory's order; with `paged: false`,
 * in one plain search without the paged-results control.
 */
export async function searchEntries(
  input: StepInput,
  base: string,
  spec: Pick<SearchSpec, "scope">,
  filter: FilterNode,
  limit: number,
  options: { paged?: boolean; reads?: ReadSource | undefined } = {},
): Promise<EntryObject[]> {
  const { directory, loaders } = directoryOf(input.context, options.reads);
  const { attributes, binaryAttributes } = input.context;
  const entries: EntryObject[] = [];
  try {
    for await (const page of directory.search(base, {
      scope: spec.scope,
      filter,
      attributes,
      binaryAttributes,
      sizeLimit: limit,
      pageSize: Math.min(limit, 500),
      paged: options.paged ?? true,
    })) {
      for (const entry of page) entries.push(EntryObject.from(entry));
    }
  } catch (error) {
    if (error instanceof DirectoryError && error.code === "ANNAL_LDAP_NO_SUCH_OBJECT") return [];
    throw error;
  }
  loaders.prime(entries);
  return entries;
}

async function countEntries(
  input: StepInput,
  base: string,
  spec: SearchSpec,
  filter: FilterNode,
  reads: ReadSource | undefined,
): Promise<number> {
  const { directory } = directoryOf(input.context, reads);
  let count = 0;
  try {
    for await (const page of directory.search(base, {
      scope: spec.scope,
      filter,
      attributes: ["1.1"],
      pageSize: 500,
    })) {
      count += page.length;
    }
  } catch (error) {
    if (error instanceof DirectoryError && error.code === "ANNAL_LDAP_NO_SUCH_OBJECT") return 0;
    throw error;
  }
  return count;
}

/**
 * `@ldapSearch(base, scope, filter, qAttributes)`: a Connection of the matching entries, in
 * the directory's order. A page is one search with a size limit of the entries up to it (plus
 * one, to know whether another page follows); `totalCount` is a second search, made only when
 * a query asks for it.
 */
export const ldapSearch: DirectiveCompiler = (site) => {
  const spec = searchSpec(site);
  const node = connectionNodeType(site);
  const reads = readSourceOf(site);
  return async (input) => {
    const base = baseDN(spec, input);
    const filter = searchFilter(spec, input);
    const scope = `${site.owner.name}.${site.field.name}|${base}|${spec.scope}|${renderFilter(filter)}`;
    const page = pageRequest(input.args, scope);
    if (base === undefined) return connection([], page, false, scope, () => 0);
    const entries = await searchEntries(input, base, spec, filter, page.offset + page.first + 1, {
      reads,
    });
    const nodes = entries
      .slice(page.offset, page.offset + page.first)
      .map((entry) => entry.as(node.concrete ? node.name : undefined));
    return connection(nodes, page, entries.length > page.offset + page.first, scope, () =>
      countEntries(input, base, spec, filter, reads),
    );
  };
};
