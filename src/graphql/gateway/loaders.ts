import DataLoader from "dataloader";
import {
  and,
  DirectoryError,
  eq,
  normalizeDN,
  or,
  parentDN,
  parseDN,
  present,
  renderFilter,
  identityFilter,
  type DirectoryClient,
  type DirectorySchema,
  type IdentityAttribute,
  type IdentitySetting,
  type SearchOptions,
} from "../../directory/index.ts";
import { type FilterNode } from "../../filters/index.ts";
import { EntryObject, identityOfEntry } from "./entry.ts";

/** How many values one batched search ORs together. */
const CHUNK = 100;

/** One lookup of entries whose `attribute` equals `value` below `base`, within `filter`. */
export interface AttributeLookup {
  readonly base: string;
  readonly scope: NonNullable<SearchOptions["scope"]>;
  readonly filter: FilterNode | undefined;
  readonly attribute: string;
  readonly value: string;
}

/** One lookup of the entry whose identity (`[directory] identity`) is `identity`, below `base`. */
export interface IdentityLookup {
  readonly base: string;
  readonly scope: NonNullable<SearchOptions["scope"]>;
  readonly filter: FilterNode | undefined;
  /** Canonical UUID text, as the log, REST and GraphQL write an entry's identity. */
  readonly identity: string;
}

/**
 * The lookups of one request, batched and cached (DataLoader): every DN asked for in one tick
 * is read with one search per parent DN; every `attribute = value` lookup with one search per
 * base, filter and attribute, every identity lookup with one per base and filter. Entries read
 * by searches prime the DN cache.
 */
export interface EntryLoaders {
  readonly byDN: DataLoader<string, EntryObject | null, string>;
  readonly byAttribute: DataLoader<AttributeLookup, EntryObject[], string>;
  /**
   * The entries whose identity is the one asked for: found by the attribute the identity is
   * (entryUUID, nsUniqueId, objectGUID's bytes), kept only when it is theirs.
   */
  readonly byIdentity: DataLoader<IdentityLookup, EntryObject[], string>;
  /** Reads a search into entries and primes the DN cache with them. */
  prime(entries: readonly EntryObject[]): void;
  /** Forgets what was read of `dn` (after a write). */
  forget(dn: string): void;
}

export interface LoaderOptions {
  readonly directory: DirectoryClient;
  /** The attributes every entry is read with (all the schema refers to). */
  readonly attributes: readonly string[];
  readonly binaryAttributes: readonly string[];
  /**
   * `[directory] identity`, and which of its attributes the directory knows (its schema, when
   * read): what an identity lookup searches by. Default `auto`, any of them.
   */
  readonly identity?: {
    readonly setting: IdentitySetting;
    readonly known?: (attribute: IdentityAttribute) => boolean;
  };
}

/**
 * What an identity lookup searches by: `setting` (default `auto`), and under `auto` only the
 * identity attributes `schema` (the directory's, when annal read it) has: slapd knows no
 * nsUniqueId, and a filter naming it could not be answered from the projections.
 */
export function identityLookups(
  setting: IdentitySetting | undefined,
  schema: DirectorySchema | undefined,
): NonNullable<LoaderOptions["identity"]> {
  if (schema === undefined) return { setting: setting ?? "auto" };
  return {
    setting: setting ?? "auto",
    known: (attribute) => schema.canonical(attribute) !== undefined,
  };
}

/** Collects a whole search into entries. */
export async function searchAll(
  directory: DirectoryClient,
  base: string,
  options: SearchOptions,
): Promise<EntryObject[]> {
  const entries: EntryObject[] = [];
  for await (const page of directory.search(base, options)) {
    for (const entry of page) entries.push(EntryObject.from(entry));
  }
  return entries;
}

/**
 * Normalised DNs, remembered across requests: the same member and manager DNs are compared
 * over and over, and parsing one costs more than the lookup it serves. Bounded; cleared whole
 * when full.
 */
const normalized = new Map<string, string | null>();
const NORMALIZED_MAX = 50_000;

function normalizedDN(dn: string): string | null {
  let key = normalized.get(dn);
  if (key === undefined) {
    try {
      key = normalizeDN(dn);
    } catch {
      key = null;
    }
    if (normalized.size >= NORMALIZED_MAX) normalized.clear();
    normalized.set(dn, key);
  }
  return key;
}

const dnKey = (dn: string): string => normalizedDN(dn) ?? `invalid:${dn}`;

export function createEntryLoaders(options: LoaderOptions): EntryLoaders {
  const { directory } = options;
  const read = { attributes: options.attributes, binaryAttributes: options.binaryAttributes };
  // setImmediate rather than the default tick: resolvers of sibling list items reach their
  // lookups after a few awaits each, and should still land in one batch.
  const batchScheduleFn = (callback: () => void) => setImmediate(callback);

  const byDN = new DataLoader<string, EntryObject | null, string>(
    async (dns) => {
      const found = new Map<string, EntryObject>();
      const byParent = new Map<string, { parent: string; dns: string[] }>();
      for (const dn of dns) {
        let parent: string | undefined;
        try {
          parent = parentDN(dn);
        } catch {
          continue; // not a DN: nothing to find
        }
        if (parent === undefined) continue;
        const group = byParent.get(dnKey(parent)) ?? { parent, dns: [] };
        group.dns.push(dn);
        byParent.set(dnKey(parent), group);
      }
      await Promise.all(
        [...byParent.values()].map(async ({ parent, dns: children }) => {
          for (let i = 0; i < children.length; i += CHUNK) {
            const chunk = children.slice(i, i + CHUNK);
            const filter = rdnFilter(chunk);
            const entries =
              filter === undefined
                ? await getEach(directory, chunk, read)
                : await searchOrNothing(directory, parent, {
                    ...read,
                    scope: "one",
                    filter,
                    pageSize: 500,
                  });
            for (const entry of entries) found.set(dnKey(entry.dn), entry);
          }
        }),
      );
      return dns.map((dn) => found.get(dnKey(dn)) ?? null);
    },
    { cacheKeyFn: dnKey, batchScheduleFn },
  );

  const byAttribute = new DataLoader<AttributeLookup, EntryObject[], string>(
    async (lookups) => {
      const groups = new Map<string, AttributeLookup[]>();
      for (const lookup of lookups) {
        const key = groupKey(lookup);
        const group = groups.get(key);
        if (group === undefined) groups.set(key, [lookup]);
        else group.push(lookup);
      }
      const results = new Map<AttributeLookup, EntryObject[]>();
      await Promise.all(
        [...groups.values()].map(async (group) => {
          const { base, scope, filter, attribute } = group[0]!;
          const values = [...new Set(group.map((lookup) => lookup.value))];
          const entries: EntryObject[] = [];
          // When no field of the request reads `attribute` itself, only which of the values
          // matched is wanted of it: a group found for a hundred people brings those of its
          // members, not all of them (a hundred thousand members cost seconds to decode). The
          // attributes the request reads come whole.
          const whole = read.attributes.some((name) => sameAttribute(name, attribute));
          for (let i = 0; i < values.length; i += CHUNK) {
            const chunk = values.slice(i, i + CHUNK);
            const matches = chunk.map((value) => eq(attribute, value));
            const wanted = or(...matches);
            entries.push(
              ...(await searchOrNothing(directory, base, {
                ...read,
                ...(whole
                  ? {}
                  : {
                      attributes: [...read.attributes, attribute],
                      matchedValues: [...matches, ...read.attributes.map(wholeValues)],
                      // Keyed below by value, the matched values may come as asked.
                      matchedValuesAsAsked: true,
                    }),
                scope,
                filter: filter === undefined ? wanted : and(filter, wanted),
                pageSize: 500,
              })),
            );
          }
          // Each value is normalised once: a group of a thousand members, asked about by a
          // hundred people, would otherwise parse each DN a hundred times.
          const byValue = new Map<string, EntryObject[]>();
          for (const entry of entries) {
            byDN.prime(entry.dn, entry);
            for (const value of entry.values(attribute)) {
              const key = valueKey(typeof value === "string" ? value : value.toString("utf8"));
              const found = byValue.get(key);
              if (found === undefined) byValue.set(key, [entry]);
              else if (found.at(-1) !== entry) found.push(entry); // two values, one key
            }
          }
          for (const lookup of group)
            results.set(lookup, byValue.get(valueKey(lookup.value)) ?? []);
        }),
      );
      return lookups.map((lookup) => results.get(lookup) ?? []);
    },
    { cacheKeyFn: (lookup) => `${groupKey(lookup)}\u0000${lookup.value}`, batchScheduleFn },
  );

  const identity = options.identity ?? { setting: "auto" };
  const byIdentity = new DataLoader<IdentityLookup, EntryObject[], string>(
    async (lookups) => {
      const groups = new Map<string, IdentityLookup[]>();
      for (const lookup of lookups) {
        const key = identityGroupKey(lookup);
        const group = groups.get(key);
        if (group === undefined) groups.set(key, [lookup]);
        else group.push(lookup);
      }
      const found = new Map<string, EntryObject[]>();
      await Promise.all(
        [...groups.entries()].map(async ([key, group]) => {
          const { base, scope, filter } = group[0]!;
          const identities = [...new Set(group.map((lookup) => lookup.identity))];
          for (let i = 0; i < identities.length; i += CHUNK) {
            const wanted = identities
              .slice(i, i + CHUNK)
              .flatMap((id) => identityFilter(identity.setting, id, identity.known) ?? []);
            if (wanted.length === 0) continue;
            const entries = await searchOrNothing(directory, base, {
              ...read,
              scope,
              filter: filter === undefined ? or(...wanted) : and(filter, or(...wanted)),
              pageSize: 500,
            });
            for (const entry of entries) {
              byDN.prime(entry.dn, entry);
              // Under `auto` an entry found by its nsUniqueId may be named by its entryUUID.
              const id = identityOfEntry(entry, identity.setting);
              if (id === undefined) continue;
              const same = found.get(`${key}\u0000${id}`);
              if (same === undefined) found.set(`${key}\u0000${id}`, [entry]);
              else same.push(entry);
            }
          }
        }),
      );
      return lookups.map(
        (lookup) => found.get(`${identityGroupKey(lookup)}\u0000${lookup.identity}`) ?? [],
      );
    },
    {
      cacheKeyFn: (lookup) => `${identityGroupKey(lookup)}\u0000${lookup.identity}`,
      batchScheduleFn,
    },
  );

  return {
    byDN,
    byAttribute,
    byIdentity,
    prime(entries) {
      for (const entry of entries) byDN.prime(entry.dn, entry);
    },
    forget(dn) {
      byDN.clear(dn);
      byAttribute.clearAll();
      byIdentity.clearAll();
    },
  };
}

/** Whether two attribute names are one (case and options aside). */
function sameAttribute(a: string, b: string): boolean {
  return a.split(";")[0]!.toLowerCase() === b.split(";")[0]!.toLowerCase();
}

/** The matched-values item that keeps every value of `name`. */
function wholeValues(name: string): FilterNode {
  return present(name.split(";")[0]!);
}

function identityGroupKey(lookup: IdentityLookup): string {
  return [
    dnKey(lookup.base),
    lookup.scope,
    lookup.filter === undefined ? "" : rendered(lookup.filter),
  ].join("\u0000");
}

function groupKey(lookup: AttributeLookup): string {
  return [
    dnKey(lookup.base),
    lookup.scope,
    lookup.filter === undefined ? "" : rendered(lookup.filter),
    lookup.attribute.toLowerCase(),
  ].join("\u0000");
}

/**
 * Filters as text, by node: a field's filter is one node, compiled with the schema, that each
 * of a page's hundred lookups would otherwise render again (twice: for its cache key and its
 * batch). Filter nodes are never changed once built.
 */
const renderedFilters = new WeakMap<FilterNode, string>();

function rendered(filter: FilterNode): string {
  let text = renderedFilters.get(filter);
  if (text === undefined) {
    text = renderFilter(filter);
    renderedFilters.set(filter, text);
  }
  return text;
}

/**
 * The key values compare by, as the directory would for the common cases: a DN by its
 * normalised form, anything else ignoring case.
 */
export function valueKey(value: string): string {
  let key = valueKeys.get(value);
  if (key === undefined) {
    const dn = value.includes("=") ? normalizedDN(value) : null;
    key = dn === null ? `text:${value.toLowerCase()}` : `dn:${dn}`;
    if (valueKeys.size >= NORMALIZED_MAX) valueKeys.clear();
    valueKeys.set(value, key);
  }
  return key;
}

/** The keys of values, remembered like normalised DNs: a page compares the same members. */
const valueKeys = new Map<string, string>();

/**
 * `(|(uid=a)(uid=b)…)` over the RDNs of DNs that share a parent; a multi-valued RDN is an AND
 * of its parts. Undefined when an RDN holds a `#hex` value, which a filter cannot state.
 */
function rdnFilter(dns: readonly string[]): FilterNode | undefined {
  const parts: FilterNode[] = [];
  for (const dn of dns) {
    const rdn = parseDN(dn)[0];
    if (rdn === undefined || rdn.some((ava) => ava.ber !== undefined)) return undefined;
    const avas = rdn.map((ava) => eq(ava.type, ava.value));
    parts.push(avas.length === 1 ? avas[0]! : and(...avas));
  }
  return or(...parts);
}

async function getEach(
  directory: DirectoryClient,
  dns: readonly string[],
  read: { attributes: readonly string[]; binaryAttributes: readonly string[] },
): Promise<EntryObject[]> {
  const entries = await Promise.all(dns.map((dn) => directory.get(dn, read)));
  return entries.flatMap((entry) => (entry === undefined ? [] : [EntryObject.from(entry)]));
}

/** A search below a base that does not exist finds nothing (rather than failing). */
async function searchOrNothing(
  directory: DirectoryClient,
  base: string,
  options: SearchOptions,
): Promise<EntryObject[]> {
  try {
    return await searchAll(directory, base, options);
  } catch (error) {
    if (error instanceof DirectoryError && error.code === "ANNAL_LDAP_NO_SUCH_OBJECT") return [];
    throw error;
  }
}
