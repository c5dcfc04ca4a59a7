import type { AccountRef, Caller, Role } from "../auth/index.ts";

/**
 * `c.env.viewer`: the caller as the one authentication found them (`has`, `hasEvery`,
 * `hasSome`, `hasRole`, `hasGroup`), or, on a public route called without credentials, an
 * anonymous viewer who holds nothing.
 */
export interface EndpointViewer {
  /** True only on a public route called without (valid) credentials. */
  readonly anonymous: boolean;
  /** The account, or null for the anonymous viewer. */
  readonly account: AccountRef | null;
  readonly principals: readonly string[];
  readonly access: readonly string[];
  readonly authority: "confirmed" | "unconfirmed";
  has(access: string): boolean;
  hasEvery(access: readonly string[]): boolean;
  hasSome(access: readonly string[]): boolean;
  hasRole(role: Role): boolean;
  hasGroup(group: { readonly dn: string }): boolean;
}

/**
 * `c.env.token`: what the request's credential says, never the credential itself (endpoints
 * log and forward what they are given; a bearer token or a cookie in a log line is a leak).
 * Null for the anonymous viewer.
 */
export interface TokenInfo {
  /** `bearer` for a service account's token, `session` for the `service_session` cookie. */
  readonly type: "bearer" | "session";
  readonly accountId: string;
  readonly accountName: string;
  readonly kind: "service" | "person";
  /** The identity provider that vouches for the account (`service` for service accounts). */
  readonly origin: string;
  /** The person's identity at the origin (OIDC `sub`, the entry's entryUUID). */
  readonly subject: string | null;
  /** The session's id, for a cookie. */
  readonly sessionId: string | null;
  /** The access functions the credential carries. */
  readonly access: readonly string[];
}

export function viewerOfCaller(caller: Caller): EndpointViewer {
  return {
    anonymous: false,
    account: caller.account,
    principals: caller.principals,
    access: caller.access,
    authority: caller.authority,
    has: caller.has,
    hasEvery: caller.hasEvery,
    hasSome: caller.hasSome,
    hasRole: caller.hasRole,
    hasGroup: caller.hasGroup,
  };
}

export const ANONYMOUS_VIEWER: EndpointViewer = Object.freeze({
  anonymous: true,
  account: null,
  principals: [],
  access: [],
  authority: "confirmed",
  has: () => false,
  hasEvery: () => false,
  hasSome: () => false,
  hasRole: () => false,
  hasGroup: () => false,
});

export function tokenOfCaller(caller: Caller): TokenInfo {
  const { account } = caller;
  return {
    type: caller.credential,
    accountId: account.id,
    accountName: account.name,
    kind: account.kind,
    origin: account.origin,
    subject: account.subject ?? null,
    sessionId: caller.sessionId ?? null,
    access: caller.access,
  };
}
