import { identityAttributes } from "../../../directory/index.ts";
import type { ReadSource } from "../../context.ts";
import { BadUserInputError } from "../../errors.ts";
import type { EntryObject } from "../entry.ts";
import { decodeId, identityArgument } from "./values.ts";
import { baseDN, searchFilter, searchSpec } from "./search-spec.ts";
import { searchEntries } from "./ldap-search.ts";
import {
  directoryOf,
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
import { checkedAttribute } from "../where.ts";
import { getPossibleTypeNames } from "./types.ts";

/**
 * `@ldapFind(base, scope, filter, qAttributes, disablePaging)`: the one entry that matches, or
 * null when none or several do. Reads at most two entries: one page of two, or with
 * `disablePaging` one plain search with a size limit of two and no paged-results control
 * (for servers, or parts of a tree, where paging is refused or costly).
 */
export const ldapFind: DirectiveCompiler = (site) => {
  const spec = searchSpec(site);
  const paged = site.args.disablePaging !== true;
  const reads = readSourceOf(site);
  const shape = shapeOf(site.field);
  if (shape.list) throw siteError(site, "finds one entry: the field's type must not be a list");
  return async (input) => {
    const base = baseDN(spec, input);
    if (base === undefined) return null;
    const entries = await searchEntries(input, base, spec, searchFilter(spec, input), 2, {
      paged,
      reads,
    });
    return entries.length === 1 ? entries[0]!.as(shape.concrete) : null;
  };
};

function exactlyOne(entries: readonly EntryObject[], typeName: string | undefined) {
  return entries.length === 1 ? entries[0]!.as(typeName) : null;
}

/**
 * `@ldapFindByAttribute(base, scope, attribute, filter)`: the entry whose `attribute` equals
 * the value resolved before (one value: exactly one match or null; a list field: every entry
 * matching any of the values). Lookups of one request are batched into one search per
 * base, filter and attribute, which brings of `attribute` only the values that matched.
 */
export const ldapFindByAttribute: DirectiveCompiler = (site) => {
  if (site.position === 0) {
    throw siteError(
      site,
      "needs a value resolved before it",
      'put a directive before it, e.g. @ldapField(attribute: "dn") @ldapFindByAttribute(...)',
    );
  }
  const spec = searchSpec(site);
  const attribute = String(site.args.attribute);
  try {
    checkedAttribute(attribute);
  } catch (error) {
    throw siteError(site, (error as Error).message);
  }
  // Not an attribute the field reads of the entry it resolves on: the lookup reads it of the
  // entries it finds, and only the values that match (`byAttribute`), unless the request
  // reads it whole for another field.
  const shape = shapeOf(site.field);
  const reads = readSourceOf(site);
  return async (input) => {
    const { loaders } = directoryOf(input.context, reads);
    const base = baseDN(spec, input);
    const values = textIn(input.value);
    if (base === undefined || values.length === 0) return shape.list ? [] : null;
    const found = await loaders.byAttribute.loadMany(
      values.map((value) => ({ base, scope: spec.scope, filter: spec.filter, attribute, value })),
    );
    const entries = new Map<string, EntryObject>();
    for (const result of found) {
      if (result instanceof Error) throw result;
      for (const entry of result) entries.set(entry.dn.toLowerCase(), entry);
    }
    const list = [...entries.values()];
    return shape.list
      ? list.map((entry) => entry.as(shape.concrete))
      : exactlyOne(list, shape.concrete);
  };
};

function textIn(value: unknown): string[] {
  if (value === NOTHING || value === undefined || value === null) return [];
  const items = Array.isArray(value) ? value : [value];
  return items.flatMap((item) =>
    typeof item === "string" ? [item] : typeof item === "number" ? [String(item)] : dnsIn(item),
  );
}

/**
 * `@ldapFindByDn(dn, path)`: the entry at a DN: the directive's `dn`, else the parent's
 * attribute `path`, else the value resolved before, else the field argument `dn`. Batched
 * with every other DN read in the same request.
 */
export const ldapFindByDn: DirectiveCompiler = (site) => {
  const fixed = typeof site.args.dn === "string" ? site.args.dn : undefined;
  const path = typeof site.args.path === "string" ? site.args.path : undefined;
  if (path !== undefined) needAttribute(site, path);
  const hasArgument = site.field.args.some((arg) => arg.name === "dn");
  if (fixed === undefined && path === undefined && site.position === 0 && !hasArgument) {
    throw siteError(
      site,
      "has no DN to read: give dn or path, a value before it, or a dn: DN! argument",
    );
  }
  const shape = shapeOf(site.field);
  const reads = readSourceOf(site);
  const root = isRoot(site);
  return async (input) => {
    const dns =
      fixed !== undefined
        ? [fixed]
        : path !== undefined
          ? textValuesOf(input.parent, path)
          : input.value !== NOTHING
            ? dnsIn(input.value)
            : dnsIn(input.args.dn);
    const found = await loadEntries(input, dns, shape.list, shape.concrete, reads);
    if (root && found === null && dns[0] !== undefined) await absentThen(input, { dn: dns[0] });
    return found;
  };
};

/** Whether a directive sits on a field of `Query`: a lookup the caller named the entry of. */
function isRoot(site: DirectiveSite): boolean {
  return site.owner === site.environment.schema.getQueryType();
}

/**
 * In an operation asked `@at`, a root lookup that found nothing because the entry it names
 * did not exist at the moment (not yet created, deleted, never known) is NOT_FOUND, saying
 * which; an entry that was there (and only left out by the field's filter) stays null.
 */
async function absentThen(
  input: StepInput,
  reference: { readonly dn?: string; readonly entryUUID?: string },
): Promise<void> {
  const absence = await input.context.moment?.absence(reference);
  if (absence !== undefined) throw absence;
}

/** Entries at DNs through the request's batched loader, missing ones left out. */
export async function loadEntries(
  input: StepInput,
  dns: readonly string[],
  list: boolean,
  typeName: string | undefined,
  reads?: ReadSource,
): Promise<EntryObject | EntryObject[] | null> {
  const { loaders } = directoryOf(input.context, reads);
  if (!list) {
    if (dns[0] === undefined) return null;
    return (await loaders.byDN.load(dns[0]))?.as(typeName) ?? null;
  }
  const entries = await loaders.byDN.loadMany(dns);
  return entries.flatMap((entry) => {
    if (entry instanceof Error) throw entry;
    return entry === null ? [] : [entry.as(typeName)];
  });
}

function uuidLookup(site: DirectiveSite, argument: string) {
  if (!site.field.args.some((arg) => arg.name === argument)) {
    throw siteError(site, `the field needs an argument ${argument}: ID!`);
  }
  const spec = searchSpec(site);
  const { identity } = site.environment;
  for (const name of identityAttributes(identity)) {
    needAttribute(site, name, name === "objectGUID");
  }
  const shape = shapeOf(site.field);
  if (shape.list) throw siteError(site, "finds one entry: the field's type must not be a list");
  return { spec, shape, identity };
}

/**
 * The entry whose identity (`[directory] identity`: entryUUID, nsUniqueId or objectGUID, as
 * UUID text) is `id`, searched for by the attribute that identity is, as the server writes it.
 */
async function byIdentity(
  input: StepInput,
  spec: ReturnType<typeof searchSpec>,
  id: string,
  typeName: string | undefined,
  root: boolean,
) {
  const base = baseDN(spec, input);
  if (base === undefined) return null;
  const { loaders } = directoryOf(input.context);
  const entries = await loaders.byIdentity.load({
    base,
    scope: spec.scope,
    filter: spec.filter,
    identity: id,
  });
  const found = exactlyOne(entries, typeName);
  if (root && found === null) await absentThen(input, { entryUUID: id });
  return found;
}

/**
 * `@ldapFindByEntryUuid(base, scope, filter)`: the entry with the `entryUUID` argument, which
 * is the entry's identity as annal names it (`[directory] identity`): its entryUUID, else its
 * nsUniqueId or objectGUID as UUID text.
 */
export const ldapFindByEntryUuid: DirectiveCompiler = (site) => {
  const { spec, shape, identity } = uuidLookup(site, "entryUUID");
  const root = isRoot(site);
  return (input) => {
    const id = identityArgument(identity, input.args.entryUUID);
    if (id === undefined) {
      throw new BadUserInputError("Invalid entryUUID", {
        argument: "entryUUID",
        hint: "an entryUUID is the entry's identity as the REST channel gives it: 8-4-4-4-12 hex digits (389's nsUniqueId may also be written as 389 writes it)",
      });
    }
    return byIdentity(input, spec, id, shape.concrete, root);
  };
};

/**
 * `@ldapFindById(base, scope, filter)`: the entry with the internal ID argument `id` (base64
 * of `<type>:<identity>`, as `@id` writes it). An ID of another type finds nothing.
 */
export const ldapFindById: DirectiveCompiler = (site) => {
  const { spec, shape, identity } = uuidLookup(site, "id");
  const types = getPossibleTypeNames(site.environment.schema, shape.named);
  const root = isRoot(site);
  return (input) => {
    const decoded = decodeId(input.args.id);
    const id = decoded && identityArgument(identity, decoded.id);
    if (decoded === undefined || id === undefined) {
      throw new BadUserInputError("Invalid id", {
        argument: "id",
        hint: "pass an id as the id field of an entry gives it",
      });
    }
    if (!types.includes(decoded.type)) return null;
    return byIdentity(input, spec, id, types.length === 1 ? decoded.type : undefined, root);
  };
};
