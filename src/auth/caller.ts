import { normalizeDN } from "../directory/index.ts";
import { AnnalError } from "../errors/index.ts";
import { ForbiddenError } from "./errors.ts";

/** Who an account is, for every module that acts for it (GraphQL, workflows, endpoints). */
export interface AccountRef {
  readonly id: string;
  readonly kind: "service" | "person";
  readonly name: string;
  /** The identity provider that vouches for the account: `service` for service accounts. */
  readonly origin: string;
  /** The person's identity at the origin (the OIDC `sub`, the directory entry's entryUUID). */
  readonly subject?: string;
  readonly displayName?: string;
  /** The person's entry in the directory, when known; null for service accounts. */
  readonly dn: string | null;
}

/**
 * A role is a grant of the active Access Configuration: the access function `access`, held
 * through any of the caller's principals, or through `principal` when it is named (a group
 * DN, `account:<id>`, `service:<name>`). A service account's own token access is a role of it
 * too, held through `service:<name>`.
 */
export interface Role {
  readonly access: string;
  readonly principal?: string;
}

/** Who makes a request, as the one authentication found them, and what they may do. */
export interface Caller {
  readonly account: AccountRef;
  /** How the request proved it: a bearer token or the `service_session` cookie. */
  readonly credential: "bearer" | "session";
  /** The session's id (never the cookie's value), for a request authenticated by one. */
  readonly sessionId?: string;
  /**
   * The account's principals: group DNs (normalised, nested groups resolved), the person's
   * own DN, `account:<id>`, and for a service account `service:<name>`.
   */
  readonly principals: readonly string[];
  /** The access functions the caller holds (empty while the principal limit is exceeded). */
  readonly access: readonly string[];
  /**
   * `unconfirmed` when the identity provider could not be reached to refresh principals
   * older than `[auth] principalsRefresh`: reads go on, commands fail (`assertAuthority`).
   */
  readonly authority: "confirmed" | "unconfirmed";
  /** Why authority is unconfirmed, when it is and the last refresh said why. */
  readonly authorityProblem?: string;
  /** Whether an Access Configuration is active (without one, configurable access is denied). */
  readonly accessActive: boolean;
  /** Set when the provider gave more principals than `[auth] maxPrincipals`. */
  readonly principalLimit: { readonly count: number; readonly limit: number } | undefined;
  has(access: string): boolean;
  hasEvery(access: readonly string[]): boolean;
  hasSome(access: readonly string[]): boolean;
  hasRole(role: Role): boolean;
  /** Membership of the group `dn`, directly or through nested groups. */
  hasGroup(group: { readonly dn: string }): boolean;
}

/** The active Access Configuration, by principal. */
export interface ActiveGrants {
  readonly version: number;
  /** Normalised principal → the access functions granted to it. */
  readonly byPrincipal: ReadonlyMap<string, ReadonlySet<string>>;
}

/**
 * A principal as grants and principal sets hold it: `account:<id>`, `service:<name>` and
 * `group:<name>` (a group an OpenID provider names without a DN) as
 * written, anything else a DN in annal's normalised form (so `CN=Ops,OU=Groups,...` and
 * `cn=ops,ou=groups,...` are one principal). Throws `InvalidDNError` for a DN that is not one.
 */
export function normalizePrincipal(principal: string): string {
  const trimmed = principal.trim();
  if (/^(account|service|group):/.test(trimmed)) return trimmed;
  return normalizeDN(trimmed);
}

export interface CallerInput {
  readonly account: AccountRef;
  readonly credential: "bearer" | "session";
  readonly sessionId?: string;
  readonly principals: readonly string[];
  /** A service account's tokens' access; none for a person. */
  readonly ownAccess: readonly string[];
  readonly grants: ActiveGrants | undefined;
  readonly authority: "confirmed" | "unconfirmed";
  readonly authorityProblem?: string | undefined;
  readonly principalLimit?: { readonly count: number; readonly limit: number } | undefined;
}

/** Builds a caller: its access is its own (tokens) plus every grant to any of its principals. */
export function buildCaller(input: CallerInput): Caller {
  const { principals, grants } = input;
  const held = new Set<string>(input.principalLimit ? [] : input.ownAccess);
  if (!input.principalLimit && grants) {
    for (const principal of principals) {
      for (const access of grants.byPrincipal.get(principal) ?? []) held.add(access);
    }
  }
  const access = [...held].sort();
  const principalSet = new Set(principals);
  const has = (fn: string) => held.has(fn);
  return {
    account: input.account,
    credential: input.credential,
    ...(input.sessionId === undefined ? {} : { sessionId: input.sessionId }),
    principals,
    access,
    authority: input.authority,
    ...(input.authorityProblem === undefined ? {} : { authorityProblem: input.authorityProblem }),
    accessActive: grants !== undefined,
    principalLimit: input.principalLimit,
    has,
    hasEvery: (list) => list.every(has),
    hasSome: (list) => list.some(has),
    hasRole(role) {
      if (input.principalLimit) return false;
      if (role.principal === undefined) return has(role.access);
      const principal = safePrincipal(role.principal);
      if (!principalSet.has(principal)) return false;
      const own =
        input.account.kind === "service" &&
        principal === `service:${input.account.name}` &&
        input.ownAccess.includes(role.access);
      return own || (grants?.byPrincipal.get(principal)?.has(role.access) ?? false);
    },
    hasGroup: ({ dn }) => principalSet.has(safePrincipal(dn)),
  };
}

function safePrincipal(principal: string): string {
  try {
    return normalizePrincipal(principal);
  } catch {
    return principal;
  }
}

/** What an access check reads of a caller. */
type Holder = Pick<Caller, "account" | "access" | "accessActive" | "principalLimit">;

export function hasAccess(caller: Pick<Caller, "access">, access: string): boolean {
  return caller.access.includes(access);
}

/**
 * Refuses unless `caller` holds `access`: `AUTHORIZATION_PRINCIPAL_LIMIT_EXCEEDED` first for
 * an account over the principal limit (its reads and commands all fail), then
 * `ANNAL_ACCESS_NOT_ACTIVE` for a person while no Access Configuration is active, else
 * `ANNAL_FORBIDDEN` naming the missing access function.
 */
export function assertAccess(caller: Holder, access: string): void {
  if (caller.principalLimit) throw principalLimitError(caller.principalLimit);
  if (hasAccess(caller, access)) return;
  if (caller.account.kind === "person" && !caller.accessActive) throw accessNotActive(access);
  throw new ForbiddenError(access, caller.account);
}

/**
 * Refuses a command (a mutation, a workflow command) when the caller's authority is not
 * confirmed: its identity provider could not be reached and its principals are stale.
 */
export function assertAuthority(
  caller: Pick<Caller, "authority" | "authorityProblem" | "account">,
): void {
  if (caller.authority === "confirmed") return;
  const origin = caller.account.origin;
  throw new AnnalError(
    "WF_AUTHORIZATION_DENIED",
    `the authority of ${caller.account.name} could not be confirmed: ${caller.authorityProblem ?? `the identity provider of origin "${origin}" did not answer`}`,
    {
      hint: "sign in again; if that fails too, the identity provider is down or refuses this account",
      details: { reason: "authority-unconfirmed", signInAgain: true, origin },
    },
  );
}

export function principalLimitError(limit: { count: number; limit: number }): AnnalError {
  return new AnnalError(
    "AUTHORIZATION_PRINCIPAL_LIMIT_EXCEEDED",
    `the identity provider gave this account ${limit.count} principals, more than the ${limit.limit} allowed`,
    { details: { count: limit.count, limit: limit.limit } },
  );
}

export function accessNotActive(access: string): AnnalError {
  return new AnnalError(
    "ANNAL_ACCESS_NOT_ACTIVE",
    `no Access Configuration is active, so "${access}" is denied`,
  );
}
