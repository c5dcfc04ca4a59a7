import type { PoolClient } from "../../src/db/index.ts";
import type { Projection } from "../../src/projector/index.ts";
import { accessTables, ACCESS_PROJECTION } from "./tables.ts";

const HANDLED = [
  "ServiceAccountTokenIssued",
  "ServiceAccountAccessChanged",
  "ServiceAccountRevoked",
  "PersonAccountCreated",
  "PersonAccountUpdated",
  "PrincipalsRefreshed",
  "PrincipalLimitExceeded",
  "AccessConfigurationActivated",
  "AccessConfigurationDeactivated",
] as const;

/**
 * `access`: who could do what, and since when. Accounts (people and service accounts), the
 * principals people's providers gave, service accounts' token access and the Access
 * Configuration's activations, each as versions with validity intervals on the events'
 * `occurred_at`, so that access can be worked out at any past moment (`accessAt` in auth/).
 */
export const accessProjection: Projection<(typeof HANDLED)[number]> = {
  name: ACCESS_PROJECTION,
  version: 1,
  handles: HANDLED,
  tables: accessTables,
  async apply(events, { tx, table }) {
    const accounts = table("accounts");
    const principalSets = table("principal_sets");
    const serviceAccess = table("service_access");
    const activations = table("activations");
    const close = (name: string, key: string, id: string, at: Date) =>
      tx.query(`UPDATE ${name} SET valid_to = $2 WHERE ${key} = $1 AND valid_to IS NULL`, [id, at]);
    for (const event of events) {
      const at = event.occurredAt;
      switch (event.type) {
        case "ServiceAccountTokenIssued": {
          const { accountId, name, access } = event.data;
          const open = await openRow(tx, accounts, accountId);
          if (!open) {
            await tx.query(
              `INSERT INTO ${accounts} (id, kind, origin, name, valid_from, position)
               VALUES ($1, 'service', 'service', $2, $3, $4)`,
              [accountId, name, at, event.position],
            );
          }
          await replaceAccess(tx, serviceAccess, accountId, access, at);
          break;
        }
        case "ServiceAccountAccessChanged":
          await replaceAccess(tx, serviceAccess, event.data.accountId, event.data.access, at);
          break;
        case "ServiceAccountRevoked":
          await close(accounts, "id", event.data.accountId, at);
          await close(serviceAccess, "account_id", event.data.accountId, at);
          break;
        case "PersonAccountCreated":
        case "PersonAccountUpdated": {
          const data = event.data;
          const before = (
            await tx.query<{ origin: string; subject: string | null }>(
              `SELECT origin, subject FROM ${accounts} WHERE id = $1 ORDER BY valid_from DESC LIMIT 1`,
              [data.accountId],
            )
          ).rows[0];
          const origin = "origin" in data ? data.origin : (before?.origin ?? "");
          const subject = "subject" in data ? data.subject : (before?.subject ?? null);
          await close(accounts, "id", data.accountId, at);
          await tx.query(
            `INSERT INTO ${accounts} (id, kind, origin, subject, name, display_name, dn, valid_from, position)
             VALUES ($1, 'person', $2, $3, $4, $5, $6, $7, $8)`,
            [
              data.accountId,
              origin,
              subject,
              data.name,
              data.displayName,
              data.dn,
              at,
              event.position,
            ],
          );
          break;
        }
        case "PrincipalsRefreshed":
        case "PrincipalLimitExceeded": {
          const data = event.data;
          const over = event.type === "PrincipalLimitExceeded";
          const principals = "principals" in data ? [...data.principals] : [];
          // The same set again (a sign-in that changes nothing) is the same version, newly
          // confirmed: "since when" stays when it started.
          const same = await tx.query(
            `UPDATE ${principalSets} SET refreshed_at = $4
              WHERE account_id = $1 AND valid_to IS NULL AND principals = $2 AND over_limit = $3`,
            [data.accountId, principals, over, data.refreshedAt],
          );
          if ((same.rowCount ?? 0) > 0) break;
          await close(principalSets, "account_id", data.accountId, at);
          await tx.query(
            `INSERT INTO ${principalSets} (account_id, principals, over_limit, principal_count, refreshed_at, valid_from)
             VALUES ($1, $2, $3, $4, $5, $6)`,
            [
              data.accountId,
              principals,
              over,
              "count" in data ? data.count : data.principals.length,
              data.refreshedAt,
              at,
            ],
          );
          break;
        }
        case "AccessConfigurationActivated": {
          const data = event.data;
          await tx.query(`UPDATE ${activations} SET valid_to = $1 WHERE valid_to IS NULL`, [at]);
          await tx.query(
            `INSERT INTO ${activations} (version, digest, activated_by, grants, valid_from)
             VALUES ($1, $2, $3, $4, $5)`,
            [data.version, data.digest, data.activatedBy, JSON.stringify(data.grants), at],
          );
          break;
        }
        case "AccessConfigurationDeactivated":
          await tx.query(
            `UPDATE ${activations} SET valid_to = $1, ended_by = $2 WHERE valid_to IS NULL`,
            [at, event.data.deactivatedBy],
          );
          break;
      }
    }
  },
};

async function openRow(tx: PoolClient, table: string, id: string): Promise<boolean> {
  const found = await tx.query(`SELECT 1 FROM ${table} WHERE id = $1 AND valid_to IS NULL`, [id]);
  return (found.rowCount ?? 0) > 0;
}

async function replaceAccess(
  tx: PoolClient,
  table: string,
  accountId: string,
  access: readonly string[],
  at: Date,
): Promise<void> {
  await tx.query(`UPDATE ${table} SET valid_to = $2 WHERE account_id = $1 AND valid_to IS NULL`, [
    accountId,
    at,
  ]);
  await tx.query(`INSERT INTO ${table} (account_id, access, valid_from) VALUES ($1, $2, $3)`, [
    accountId,
    [...access],
    at,
  ]);
}
