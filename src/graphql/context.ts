import type { AccessFunction, ServiceAccount } from "../auth/index.ts";
import type { DirectoryClient } from "../directory/index.ts";
import type { Logger } from "../logger.ts";
import type { Gateway } from "./gateway.ts";
import type { EntryLoaders } from "./loaders.ts";

/** The caller of one request. */
export interface Viewer {
  readonly account: ServiceAccount;
  /** The DN the caller's writes are made as (RFC 4370), from `[graphql] actorDN`. */
  readonly dn: string;
  readonly access: readonly AccessFunction[];
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
  /** The identity the write was made as, which the directory's log records. */
  readonly actor: string;
  /** The service account that asked for it. */
  readonly account: { readonly id: string; readonly name: string };
  /** The GraphQL request that asked for it (unique: a uuid). */
  readonly requestId: string;
}

/** The context of one GraphQL request. */
export interface GatewayContext {
  /** A uuid of the request's own (also sent as `x-request-id`). */
  readonly requestId: string;
  readonly viewer: Viewer;
  readonly gateway: Gateway;
  readonly directory: DirectoryClient | undefined;
  /** Batched, cached lookups for this request; undefined without a directory. */
  readonly loaders: EntryLoaders | undefined;
  /** Languages of `Accept-Language`, most wanted first. */
  readonly languages: readonly string[];
  readonly log: Logger;
  readonly beforeWrite: ((write: DirectoryWrite) => Promise<void>) | undefined;
  readonly afterWrite: ((write: DirectoryWrite) => Promise<void>) | undefined;
}
