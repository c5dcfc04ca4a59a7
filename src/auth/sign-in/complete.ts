import { withTransaction, type Pool } from "../../db/index.ts";
import type { EventStore } from "../../store/index.ts";
import {
  recordPrincipals,
  upsertPerson,
  type FoundPrincipals,
  type PersonAccount,
  type PersonIdentity,
} from "../persons.ts";
import { startSession, type ProviderTokens, type SessionPolicy } from "../sessions.ts";

/**
 * A sign-in's end, in one transaction: the person's account made or brought up to date, the
 * principals the provider gave recorded, and a new session started. Its cookie value is
 * returned for the `Set-Cookie` header and nowhere else.
 */
export async function completeSignIn(
  pool: Pool,
  store: EventStore,
  options: {
    readonly identity: PersonIdentity;
    readonly principals: FoundPrincipals;
    readonly method: "oidc" | "ldap";
    readonly address: string | undefined;
    readonly policy: SessionPolicy;
    readonly maxPrincipals: number;
    readonly providerTokens?: ProviderTokens;
  },
): Promise<{ account: PersonAccount; cookie: string; sessionId: string; expiresAt: Date }> {
  return withTransaction(pool, async (tx) => {
    const account = await upsertPerson(tx, store, options.identity);
    await recordPrincipals(
      tx,
      store,
      account.id,
      options.principals,
      options.maxPrincipals,
      "sign-in",
    );
    const session = await startSession(tx, store, {
      accountId: account.id,
      method: options.method,
      address: options.address,
      policy: options.policy,
      ...(options.providerTokens === undefined ? {} : { providerTokens: options.providerTokens }),
    });
    return { account, ...session };
  });
}
