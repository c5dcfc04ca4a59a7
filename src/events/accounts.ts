/** The events of a service account's life, on its stream `service-account-<id>`. */
export const SERVICE_ACCOUNT_EVENT = {
  /** A token was issued (the token itself is never recorded, only its id). */
  tokenIssued: "ServiceAccountTokenIssued",
  /** The account and every token it had were revoked. */
  revoked: "ServiceAccountRevoked",
  /** `annal token access` changed what the account may do. */
  accessChanged: "ServiceAccountAccessChanged",
} as const;

/** The stream of one service account. */
export const serviceAccountStream = (accountId: string) => `service-account-${accountId}`;

export interface ServiceAccountTokenIssued {
  readonly accountId: string;
  readonly name: string;
  readonly access: readonly string[];
  readonly tokenId: string;
}

export interface ServiceAccountRevoked {
  readonly accountId: string;
  readonly name: string;
}

export interface ServiceAccountAccessChanged {
  readonly accountId: string;
  readonly name: string;
  readonly previous: readonly string[];
  readonly access: readonly string[];
}

/**
 * The events of a person's account, on its stream `account-<id>`: the account itself, the
 * principals its identity provider gave (and when), and its sessions (by a session id, never
 * the cookie). With the Access Configuration's activations they answer "who could do what,
 * and since when" (the `access` projection).
 */
export const ACCOUNT_EVENT = {
  created: "PersonAccountCreated",
  updated: "PersonAccountUpdated",
  principalsRefreshed: "PrincipalsRefreshed",
  principalLimitExceeded: "PrincipalLimitExceeded",
  sessionStarted: "SessionStarted",
  sessionEnded: "SessionEnded",
} as const;

/** The stream of one person's account. */
export const accountStream = (accountId: string) => `account-${accountId}`;

/** The Access Configuration's stream: one event per activation or deactivation. */
export const ACCESS_CONFIGURATION_STREAM = "access-configuration";

export const ACCESS_CONFIGURATION_EVENT = {
  activated: "AccessConfigurationActivated",
  deactivated: "AccessConfigurationDeactivated",
} as const;

export interface PersonAccountCreated {
  readonly accountId: string;
  /** The identity provider that vouches for the person (`[auth.oidc] origin`, `[auth.ldap] origin`). */
  readonly origin: string;
  /** The person's identity at the origin (the OIDC `sub`, the entry's entryUUID). */
  readonly subject: string;
  readonly name: string;
  readonly displayName: string | null;
  readonly dn: string | null;
}

/** What the provider says of the person changed (seen at a sign-in). */
export interface PersonAccountUpdated {
  readonly accountId: string;
  readonly name: string;
  readonly displayName: string | null;
  readonly dn: string | null;
}

/**
 * The principals the provider gave: recorded at every sign-in and whenever a refresh finds
 * them changed. `refreshedAt` is when the provider said so.
 */
export interface PrincipalsRefreshed {
  readonly accountId: string;
  readonly principals: readonly string[];
  readonly refreshedAt: string;
  readonly reason: "sign-in" | "refresh";
}

/** The provider gave more principals than `[auth] maxPrincipals`: the account may do nothing. */
export interface PrincipalLimitExceeded {
  readonly accountId: string;
  readonly count: number;
  readonly limit: number;
  readonly refreshedAt: string;
}

export interface SessionStarted {
  readonly accountId: string;
  /** The session's id (a uuid of its own), never the cookie's value. */
  readonly sessionId: string;
  readonly method: "oidc" | "ldap";
  readonly expiresAt: string;
}

export interface SessionEnded {
  readonly accountId: string;
  readonly sessionId: string;
  readonly reason: "logout" | "revoked" | "expired";
  /** Who ended it: the person (logout), or `annal sessions revoke`. */
  readonly by: string;
}

/** One grant of the Access Configuration: an access function and the principals given it. */
export type AccessGrants = Readonly<Record<string, readonly string[]>>;

export interface AccessConfigurationActivated {
  readonly version: number;
  /** SHA-256 of the grants as activated (hex), so a changed file with the same version is seen. */
  readonly digest: string;
  /** `[authorization.activate] by`: who activated it. */
  readonly activatedBy: string;
  readonly grants: AccessGrants;
}

export interface AccessConfigurationDeactivated {
  readonly version: number;
  readonly deactivatedBy: string;
}
