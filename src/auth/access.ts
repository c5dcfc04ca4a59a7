import { withTransaction, type Pool } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";
import { annalEvent, serviceAccountStream } from "../events/index.ts";
import type { EventStore } from "../store/index.ts";
import { ACCESS_FUNCTIONS, type AccessFunction } from "./accounts.ts";
import { accountNotFound } from "./errors.ts";

/** How to change an account's access: exactly one of the three. */
export type AccessChange =
  | { readonly set: readonly AccessFunction[] }
  | { readonly add: readonly AccessFunction[] }
  | { readonly remove: readonly AccessFunction[] };

/**
 * Changes the access of the active service account `name`, for every token it has, and
 * records `ServiceAccountAccessChanged` with the access before and after (nothing is recorded
 * when nothing changes). Access comes out in the order of `ACCESS_FUNCTIONS`.
 *
 * @example
 * const { access } = await changeAccess(pool, store, "ci", { add: ["export"] });
 *
 * @throws AnnalError `ANNAL_ACCOUNT_NOT_FOUND` (404) for no active account of that name;
 *   `ANNAL_ACCESS_EMPTY` (400) when no access would be left (revoking is its own command).
 */
export async function changeAccess(
  pool: Pool,
  store: EventStore,
  name: string,
  change: AccessChange,
): Promise<{ previous: AccessFunction[]; access: AccessFunction[] }> {
  return withTransaction(pool, async (tx) => {
    // FOR UPDATE: two changes at once apply one after the other, each to the other's result.
    const found = await tx.query<{ id: string; access: AccessFunction[] }>(
      "SELECT id, access FROM service_accounts WHERE name = $1 AND revoked_at IS NULL FOR UPDATE",
      [name],
    );
    const row = found.rows[0];
    if (!row) throw accountNotFound(name);
    const previous = ordered(row.access);
    const wanted =
      "set" in change
        ? change.set
        : "add" in change
          ? [...previous, ...change.add]
          : previous.filter((fn) => !change.remove.includes(fn));
    const access = ordered(wanted);
    if (access.length === 0) {
      throw new AnnalError(
        "ANNAL_ACCESS_EMPTY",
        `service account "${name}" would have no access left`,
        {
          status: 400,
          hint: `to end the account and its tokens: annal token revoke ${name}`,
        },
      );
    }
    if (access.join() === previous.join()) return { previous, access };
    await tx.query("UPDATE service_accounts SET access = $2 WHERE id = $1", [row.id, access]);
    await store.appendToStream(
      serviceAccountStream(row.id),
      [annalEvent("ServiceAccountAccessChanged", { accountId: row.id, name, previous, access })],
      { tx },
    );
    return { previous, access };
  });
}

/** The access of the active account `name`, without changing it. */
export async function accessOf(pool: Pool, name: string): Promise<AccessFunction[]> {
  const found = await pool.query<{ access: AccessFunction[] }>(
    "SELECT access FROM service_accounts WHERE name = $1 AND revoked_at IS NULL",
    [name],
  );
  const row = found.rows[0];
  if (!row) throw accountNotFound(name);
  return ordered(row.access);
}

function ordered(access: readonly AccessFunction[]): AccessFunction[] {
  return ACCESS_FUNCTIONS.filter((fn) => access.includes(fn));
}
