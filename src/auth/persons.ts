import { randomUUID } from "node:crypto";
import type { PoolClient, Queryable } from "../db/index.ts";
import { accountStream, annalEvent } from "../events/index.ts";
import type { EventStore } from "../store/index.ts";

/** A person as their identity provider describes them at a sign-in. */
export interface PersonIdentity {
  readonly origin: string;
  readonly subject: string;
  readonly name: string;
  readonly displayName: string | null;
  readonly dn: string | null;
}

export interface PersonAccount extends PersonIdentity {
  readonly id: string;
}

/** Principals as a provider gave them: normalised group DNs, and how many there were. */
export interface FoundPrincipals {
  readonly principals: readonly string[];
  readonly count: number;
}

/**
 * The account of the person `identity` names (by origin and subject), made on their first
 * sign-in (`PersonAccountCreated`) and brought up to date on later ones
 * (`PersonAccountUpdated`, only when the name, display name or DN changed).
 */
export async function upsertPerson(
  tx: PoolClient,
  store: EventStore,
  identity: PersonIdentity,
): Promise<PersonAccount> {
  // FOR UPDATE: two sign-ins of one person at once record one creation.
  await tx.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
    `annal.person:${identity.origin}:${identity.subject}`,
  ]);
  const found = (
    await tx.query<{ id: string; name: string; display_name: string | null; dn: string | null }>(
      "SELECT id, name, display_name, dn FROM person_accounts WHERE origin = $1 AND subject = $2 FOR UPDATE",
      [identity.origin, identity.subject],
    )
  ).rows[0];
  if (found === undefined) {
    const id = randomUUID();
    await tx.query(
      `INSERT INTO person_accounts (id, origin, subject, name, display_name, dn)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [id, identity.origin, identity.subject, identity.name, identity.displayName, identity.dn],
    );
    await store.appendToStream(
      accountStream(id),
      [annalEvent("PersonAccountCreated", { accountId: id, ...identity })],
      { tx, expectedVersion: "no_stream" },
    );
    return { id, ...identity };
  }
  if (
    found.name !== identity.name ||
    found.display_name !== identity.displayName ||
    found.dn !== identity.dn
  ) {
    await tx.query(
      "UPDATE person_accounts SET name = $2, display_name = $3, dn = $4 WHERE id = $1",
      [found.id, identity.name, identity.displayName, identity.dn],
    );
    await store.appendToStream(
      accountStream(found.id),
      [
        annalEvent("PersonAccountUpdated", {
          accountId: found.id,
          name: identity.name,
          displayName: identity.displayName,
          dn: identity.dn,
        }),
      ],
      { tx },
    );
  }
  return { id: found.id, ...identity };
}

/**
 * Stores the principals a provider gave and records them: `PrincipalsRefreshed` at a sign-in
 * and whenever a refresh finds them changed, `PrincipalLimitExceeded` when there are more than
 * `limit` (the set is then kept empty, and the account can do nothing until it has fewer).
 */
export async function recordPrincipals(
  tx: Queryable & PoolClient,
  store: EventStore,
  accountId: string,
  found: FoundPrincipals,
  limit: number,
  reason: "sign-in" | "refresh",
): Promise<void> {
  const over = found.count > limit;
  const principals = over ? [] : [...found.principals];
  const before = (
    await tx.query<{ principals: string[]; over_limit: boolean }>(
      "SELECT principals, over_limit FROM account_principals WHERE account_id = $1 FOR UPDATE",
      [accountId],
    )
  ).rows[0];
  const refreshedAt = (
    await tx.query<{ now: Date }>(
      `INSERT INTO account_principals (account_id, principals, principal_count, over_limit, refreshed_at)
       VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (account_id) DO UPDATE SET principals = EXCLUDED.principals,
         principal_count = EXCLUDED.principal_count, over_limit = EXCLUDED.over_limit,
         refreshed_at = EXCLUDED.refreshed_at, refresh_failed_at = NULL, refresh_failure = NULL
       RETURNING refreshed_at AS now`,
      [accountId, principals, found.count, over],
    )
  ).rows[0]!.now.toISOString();
  const changed =
    before === undefined ||
    before.over_limit !== over ||
    before.principals.join("\n") !== principals.join("\n");
  if (reason === "refresh" && !changed) return;
  await store.appendToStream(
    accountStream(accountId),
    [
      over
        ? annalEvent("PrincipalLimitExceeded", {
            accountId,
            count: found.count,
            limit,
            refreshedAt,
          })
        : annalEvent("PrincipalsRefreshed", { accountId, principals, refreshedAt, reason }),
    ],
    { tx },
  );
}

/**
 * Notes that a refresh of the account's principals failed, and why (`the identity provider
 * answered invalid_grant`, `... could not be reached`).
 */
export async function recordRefreshFailure(
  db: Queryable,
  accountId: string,
  failure: string,
): Promise<void> {
  await db.query(
    "UPDATE account_principals SET refresh_failed_at = now(), refresh_failure = $2 WHERE account_id = $1",
    [accountId, failure],
  );
}
