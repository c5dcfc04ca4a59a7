import type { CompiledReads } from "./gateway/compile.ts";
import type { SigningKey } from "../audit/index.ts";
import type { ReviewDefinition } from "../reviews/index.ts";
import type { Clock } from "../time/index.ts";
import type { GraphQLField, GraphQLSchema } from "graphql";
import type { AccessReport, Caller } from "../auth/index.ts";
import type { Queryable } from "../db/index.ts";
import type { DirectoryClient, IdentitySetting } from "../directory/index.ts";
import type { Logger } from "../logger.ts";
import type { EngineDeps } from "../workflow/index.ts";
import type { EntryTypes } from "./gateway/entry-types.ts";
import type { Translations } from "./gateway/i18n.ts";
import type { EntryLoaders } from "./gateway/loaders.ts";
import type { MomentReads } from "./gateway/moment-reads.ts";

/**
 * Everything the directives are given, in two parts: `DirectiveEnvironment`, what they know of
 * the gateway (built once by `buildGateway`, read when a directive is compiled), and
 * `GatewayContext`, one request (built for each by the plugin, read when a directive runs).
 * Neither holds the configuration or the gateway itself: a directive reads what is named here
 * and nothing else.
 */

/**
 * The caller of one request, as authentication found them (`has`, `hasGroup`, ... included),
 * and the DN their writes are made as.
 */
export interface Viewer extends Caller {
  /**
   * The DN the caller's writes are made as (RFC 4370 proxied authorization): a person's own
   * entry, a service account's `[graphql] actorDN`; null for a person the directory does not
   * know, who cannot write.
   */
  readonly actorDN: string | null;
}

/**
 * One directory write of a mutation: given to `beforeWrite` just before it is sent and to
 * `afterWrite` once the directory has applied it.
 */
export interface DirectoryWrite {
  readonly operation: "add" | "modify" | "modifyDN" | "delete";
  /** The entry's DN before the write. */
  readonly dn: string;
  /** The entry's DN after a `modifyDN`, and its new RDN. */
  readonly newDN?: string;
  readonly newRDN?: string;
  /** What a `modify` changes (values left out: they may be secrets or bytes). */
  readonly changes?: readonly { readonly operation: string; readonly attribute: string }[];
  /**
   * A digest of a `modify`'s values (`valuesDigest`, secrets left out), by which capture tells
   * this write's change from another of the same shape to the same entry.
   */
  readonly valuesDigest?: string;
  /** The identity the write was made as, which the directory's log records. */
  readonly actor: string;
  /** The account that asked for it. */
  readonly account: { readonly id: string; readonly name: string };
  /** The GraphQL request that asked for it (unique: a uuid). */
  readonly requestId: string;
}

/**
 * What `beforeWrite` noted of a write, when it noted one: withdrawn when the directory refuses
 * the write, so that no change of someone else's is taken for it.
 */
export interface WriteNote {
  withdraw(): Promise<void>;
}

/** A header or query value of a REST backend: one, or several (sent once per value). */
type RestValues = Readonly<Record<string, string | readonly string[]>>;

/** One backend `@rest` may call (`[[graphql.rest]]`). */
export interface RestBackend {
  readonly name: string;
  readonly base: string;
  readonly headers: RestValues;
  readonly query: RestValues;
  readonly body: unknown;
  readonly timeoutMs: number;
  /** Every key of the backend's table, `$options` of `@rest`. */
  readonly options: Readonly<Record<string, unknown>>;
}

/** What the directives know of the gateway: fixed before the first directive is compiled. */
export interface DirectiveEnvironment {
  /** The schema being built: the types a directive names or returns are looked up in it. */
  readonly schema: GraphQLSchema;
  /**
   * `[graphql.types]`: a type's base DN and object classes (for `@ldapAdd` and
   * `@ldapModifyDn`), and which type an entry is behind a union or interface.
   */
  readonly entryTypes: EntryTypes;
  /** The labels and descriptions `@fieldset` looks up. */
  readonly translations: Translations;
  /** `[i18n] fallbackLanguage`: the language `@fieldset` and `@localizeLdapAttribute` try last. */
  readonly fallbackLanguage: string;
  /**
   * `[directory] base`: where a search without its own `base` looks, and where a mutation's
   * `id` argument is looked up. Undefined without a directory.
   */
  readonly directoryBase: string | undefined;
  /**
   * `[directory] identity`: what an entry's `@id` and an `entryUUID` or `id` lookup are (an
   * entryUUID, nsUniqueId or objectGUID as UUID text), as the log and REST have them.
   */
  readonly identity: IdentitySetting;
  /** `[[graphql.rest]]`: the only backends `@rest` can reach. */
  readonly restBackends: readonly RestBackend[];
  /**
   * The configuration as plain values, for `$config.<path>` of `@rest`: the product documents
   * let it name any configuration value, so this is all of them, but untyped.
   */
  readonly configValues: Readonly<Record<string, unknown>>;
  /**
   * The attributes every entry is read with, by lower-case name: directives add the ones they
   * refer to while they are compiled (`needAttribute`); `binaryAttributes` come as bytes.
   */
  readonly attributes: Map<string, string>;
  readonly binaryAttributes: Map<string, string>;
  /** The same, for each field whose directives read entries: what a request selecting it needs. */
  readonly fieldReads: Map<GraphQLField<unknown, unknown>, FieldReads>;
}

/** What one field's directives read of an entry, by lower-case name. */
export interface FieldReads {
  readonly attributes: Map<string, string>;
  readonly binaryAttributes: Map<string, string>;
  /** It may read any attribute (it resolves other fields, named at run time). */
  every: boolean;
}

/** Where a field's entries come from: `[graphql] reads`, or a directive's `reads` argument. */
export type ReadSource = "projection" | "directory";

/** The context of one GraphQL request: what a directive (or a resolver) knows of its request. */
export interface GatewayContext {
  /** A uuid of the request's own (also sent as `x-request-id`). */
  readonly requestId: string;
  readonly viewer: Viewer;
  /**
   * The clock moment arguments (`at`, `since`) are read on: now, and the zone of `[rest]
   * timeZone`, so that GraphQL reads a moment as the REST channel and the command line do.
   */
  readonly clock: () => Clock;
  /** Who could do what at a moment (`Query.access`), from the `access` projection. */
  readonly accessAt: (options: { at?: Date; account?: string }) => Promise<AccessReport>;
  /**
   * The workflow engine's commands and its database, for the workflow fields; undefined when
   * the gateway runs without one.
   */
  readonly workflows: { readonly engine: EngineDeps } | undefined;
  /** The `[[reviews]]` definitions and the key that signs their reports (`reviewReport`). */
  readonly reviews?: ReviewsContext;
  /** The database of the history projections, read through `src/history/` (`memberships`). */
  readonly history: Queryable;
  /** The directory, with this request's entry budget; undefined without one. */
  readonly directory: DirectoryClient | undefined;
  /** Batched, cached lookups for this request; undefined without a directory. */
  readonly loaders: EntryLoaders | undefined;
  /**
   * The directory and loaders of a field whose directive says where it reads (`reads:
   * DIRECTORY` or `PROJECTION`); undefined when the gateway has no such source (no capture).
   */
  readonly readsFrom?: (
    source: ReadSource,
  ) => { directory: DirectoryClient; loaders: EntryLoaders } | undefined;
  /**
   * The attributes this request's searches read entries with: the loaders read with the same,
   * so that an entry a search primes them with is the entry a lookup would read.
   */
  readonly attributes: readonly string[];
  readonly binaryAttributes: readonly string[];
  /**
   * The moment an operation asked `@at(moment:)` reads the directory at: every entry read
   * (the directory and loaders above) is the entry as it was then. Undefined: now.
   */
  readonly moment?: MomentReads | undefined;
  /**
   * Where an operation compiled to SQL reads (`gateway/compile.ts`): set when this request's
   * queries read the `entries` projection now and `[graphql] compile` is on.
   */
  readonly compiled?: CompiledReads | undefined;
  /** Languages of `Accept-Language`, most wanted first. */
  readonly languages: readonly string[];
  readonly log: Logger;
  readonly beforeWrite: ((write: DirectoryWrite) => Promise<WriteNote | void>) | undefined;
  readonly afterWrite: ((write: DirectoryWrite) => Promise<void>) | undefined;
}

/** What the access review operations need besides the engine. */
export interface ReviewsContext {
  readonly definitions: readonly ReviewDefinition[];
  readonly signingKey: () => Promise<SigningKey>;
}
