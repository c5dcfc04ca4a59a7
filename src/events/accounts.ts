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
