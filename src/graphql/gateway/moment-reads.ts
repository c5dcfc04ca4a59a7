import {
  normalizeDN,
  type DirectoryClient,
  type DirectoryEntry,
  type ReadOptions,
  type SearchOptions,
} from "../../directory/index.ts";
import { checkAttributes } from "../../filters/index.ts";
import { entryAt, EntryNotFoundError, entryUUIDForDn, versionsAt } from "../../history/index.ts";
import { readPages, scopeSql, type ProjectionSource } from "./projection-reads.ts";
import { selection, valuesSql } from "./row-values.ts";
import { ENTRY_VERSION_VALUES } from "../../../projections/entry-versions/index.ts";

/** What a request asked `@at` a moment reads with: the moment, and why an entry was not there. */
export interface MomentReads {
  readonly at: Date;
  /**
   * Why no entry answered a lookup that named one (by DN or entryUUID) at the moment: it did
   * not exist yet, had been deleted, or was never known. Undefined when the entry was there
   * then (a lookup's filter left it out).
   */
  absence(reference: {
    readonly dn?: string;
    readonly entryUUID?: string;
  }): Promise<EntryNotFoundError | undefined>;
}

/**
 * The directory as it was at `at`, for an operation asked `@at(moment:)`: every search and
 * read is answered from `entry_versions` (the versions valid then that match, `versionsAt`,
 * which filters typed entries through the spans of their values, as the REST channel does), with
 * the scopes, order (creation order, as the directory's), paging and attribute selection of
 * the projection's reads (`projectionDirectory`), and nothing goes to the live directory,
 * which knows only now. A page walks the versions in creation order and stops with it, as a
 * search of `entries` does (`versionsAt`'s `page`). `hasSubordinates` and `entryDN` are computed at the moment too.
 *
 * The versions hold what capture records: a redacted attribute has no values then, so a
 * filter on one matches nothing; an attribute the schema does not know is undefined (LDAP's
 * reading: `(x=1)` false, `(!(x=1))` true).
 *
 * @example
 * const then = momentDirectory(client, source, new Date("2026-03-01T00:00:00Z"));
 * for await (const page of then.search(GROUPS, { filter })) ...; // the groups of 1 March
 */
export function momentDirectory(
  directory: DirectoryClient,
  source: ProjectionSource,
  at: Date,
): DirectoryClient {
  return new Proxy(directory, {
    get(target, property, receiver) {
      if (property === "search") {
        return (dn: string, options: SearchOptions = {}) => searchAt(source, at, dn, options);
      }
      if (property === "get") {
        return async (dn: string, options: ReadOptions = {}) => {
          for await (const page of searchAt(source, at, dn, { ...options, scope: "base" })) {
            return page[0];
          }
          return undefined;
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? (value as Function).bind(target) : value; // eslint-disable-line @typescript-eslint/no-unsafe-function-type
    },
  });
}

/** The `MomentReads` of a moment, over the history module's reads of one entry. */
export function momentReads(source: ProjectionSource, at: Date): MomentReads {
  return {
    at,
    async absence({ dn, entryUUID }) {
      const id = entryUUID ?? dn ?? "";
      const uuid = entryUUID ?? (dn === undefined ? undefined : await uuidEver(source, dn));
      if (uuid === undefined) return new EntryNotFoundError(id, "unknown", { at });
      const state = await entryAt(source.db, uuid, at);
      if (state.found) return undefined;
      return state.reason === "unknown"
        ? new EntryNotFoundError(id, "unknown", { at })
        : new EntryNotFoundError(id, state.reason, { at, since: state.since });
    },
  };
}

/** The entry that had `dn` at some time, or undefined (a DN that does not parse included). */
async function uuidEver(source: ProjectionSource, dn: string): Promise<string | undefined> {
  try {
    return await entryUUIDForDn(source.db, dn, "ever");
  } catch {
    return undefined;
  }
}

/** A search answered from the versions valid at `at`, in pages as the directory sends them. */
async function* searchAt(
  source: ProjectionSource,
  at: Date,
  dn: string,
  options: SearchOptions,
): AsyncGenerator<DirectoryEntry[], void, undefined> {
  let base: string;
  try {
    // Folded as the relation's `dn_norm` is.
    base = normalizeDN(dn).toLowerCase();
  } catch {
    return;
  }
  const params: unknown[] = [];
  const bind = (value: unknown) => `$${params.push(value)}`;
  const moment = bind(at);
  const scope = scopeSql(options.scope ?? "sub", base, bind);
  const filter = checkAttributes(
    options.filter ?? { op: "present", attribute: "objectClass" },
    (name) => source.schema.canonical(name),
  ).ast;
  // The types the value spans hold are read by the statement itself: no round trip before it.
  const matching = (window: (alias: string) => string) =>
    versionsAt({ at: moment, filter, params, page: { where: scope, window } });
  const select = selection(source.schema, options.attributes);
  const subordinates = select.computed.has("hassubordinates")
    ? `EXISTS (SELECT 1 FROM ${versionsAt({ at: moment, params, alias: "c" })}
         WHERE right(c.dn_norm, length(e.dn_norm) + 1) = ',' || e.dn_norm)`
    : "NULL::boolean";
  yield* readPages(source, options, select, params, {
    ...valuesSql(
      select,
      options.matchedValues,
      bind,
      { spansTable: ENTRY_VERSION_VALUES, at: moment },
      options.matchedValuesAsAsked,
    ),
    subordinates,
    from: matching,
  });
}
