import { createHash } from "node:crypto";
import type { AuthorizationConfig } from "../config/index.ts";
import { withTransaction, type Pool } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";
import { ACCESS_CONFIGURATION_STREAM, annalEvent, type AccessGrants } from "../events/index.ts";
import type { EventStore } from "../store/index.ts";
import { normalizePrincipal, type ActiveGrants } from "./caller.ts";

/** What `activateAccessConfiguration` did. */
export type Activation =
  | { readonly outcome: "activated"; readonly version: number }
  | { readonly outcome: "unchanged"; readonly version: number }
  | { readonly outcome: "deactivated"; readonly version: number }
  | { readonly outcome: "none" };

/**
 * The grants as they are activated: each access function's principals normalised, sorted and
 * each once, functions sorted; functions granted to nobody left out.
 */
export function normalizeGrants(grants: Readonly<Record<string, readonly string[]>>): AccessGrants {
  const result: Record<string, string[]> = {};
  for (const access of Object.keys(grants).sort()) {
    const principals = new Set<string>();
    for (const principal of grants[access] ?? []) {
      try {
        principals.add(normalizePrincipal(principal));
      } catch {
        throw new AnnalError(
          "ANNAL_CONFIG_INVALID",
          `[authorization.grants] ${access}: ${JSON.stringify(principal)} is not a DN, account:<id> or service:<name>`,
        );
      }
    }
    if (principals.size > 0) result[access] = [...principals].sort();
  }
  return result;
}

function digestOf(grants: AccessGrants): string {
  return createHash("sha256").update(JSON.stringify(grants)).digest("hex");
}

/**
 * Makes the configuration's `[authorization]` the active Access Configuration, as `annal
 * start` does: a version not active yet is activated (`AccessConfigurationActivated`, with
 * who, which version and the grants), the active one is left as it is, and without an
 * `[authorization.activate]` block the active one is deactivated. Processes starting at once
 * take turns (an advisory lock), so each version is recorded once.
 *
 * @throws AnnalError `ANNAL_ACCESS_VERSION_CHANGED` when the grants differ from those already
 *   activated under the same version; `ANNAL_CONFIG_INVALID` for a principal that is not one.
 */
export async function activateAccessConfiguration(
  pool: Pool,
  store: EventStore,
  config: AuthorizationConfig,
): Promise<Activation> {
  const grants = normalizeGrants(config.grants);
  const digest = digestOf(grants);
  return withTransaction(pool, async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(hashtext('annal.access-configuration'))");
    const active = (
      await tx.query<{ version: number; digest: string }>(
        "SELECT version, digest FROM access_configuration",
      )
    ).rows[0];
    const activate = config.activate;
    if (activate === undefined) {
      if (active === undefined) return { outcome: "none" };
      await tx.query("DELETE FROM access_configuration");
      await store.appendToStream(
        ACCESS_CONFIGURATION_STREAM,
        [
          annalEvent("AccessConfigurationDeactivated", {
            version: active.version,
            deactivatedBy: "annal start: the configuration has no [authorization.activate]",
          }),
        ],
        { tx },
      );
      return { outcome: "deactivated", version: active.version };
    }
    if (active?.version === activate.version) {
      if (active.digest === digest) return { outcome: "unchanged", version: active.version };
      throw new AnnalError(
        "ANNAL_ACCESS_VERSION_CHANGED",
        `the grants of [authorization] changed, but version ${activate.version} is already active with other grants`,
      );
    }
    await tx.query(
      `INSERT INTO access_configuration (version, digest, grants, activated_by)
       VALUES ($1, $2, $3, $4)
       ON CONFLICT (singleton) DO UPDATE SET version = EXCLUDED.version, digest = EXCLUDED.digest,
         grants = EXCLUDED.grants, activated_by = EXCLUDED.activated_by, activated_at = now()`,
      [activate.version, digest, JSON.stringify(grants), activate.by],
    );
    await store.appendToStream(
      ACCESS_CONFIGURATION_STREAM,
      [
        annalEvent("AccessConfigurationActivated", {
          version: activate.version,
          digest,
          activatedBy: activate.by,
          grants,
        }),
      ],
      { tx },
    );
    return { outcome: "activated", version: activate.version };
  });
}

/** The active Access Configuration as the table holds it; undefined when none is. */
export async function readActiveGrants(pool: Pool): Promise<ActiveGrants | undefined> {
  const row = (
    await pool.query<{ version: number; grants: AccessGrants }>(
      "SELECT version, grants FROM access_configuration",
    )
  ).rows[0];
  if (row === undefined) return undefined;
  return { version: row.version, byPrincipal: byPrincipal(row.grants) };
}

/** Grants by access function → the access functions of each principal. */
export function byPrincipal(grants: AccessGrants): Map<string, Set<string>> {
  const map = new Map<string, Set<string>>();
  for (const [access, principals] of Object.entries(grants)) {
    for (const principal of principals) {
      const set = map.get(principal) ?? new Set<string>();
      set.add(access);
      map.set(principal, set);
    }
  }
  return map;
}

/**
 * `readActiveGrants`, read at most once a `ttlMs` per process: every request needs the
 * grants, and an activation (a start of annal) is rare. `invalidate` forgets them at once.
 */
export function cachedGrants(pool: Pool, ttlMs = 1000) {
  let cached: { at: number; value: Promise<ActiveGrants | undefined> } | undefined;
  return {
    get(): Promise<ActiveGrants | undefined> {
      const now = Date.now();
      if (cached === undefined || now - cached.at > ttlMs) {
        const value = readActiveGrants(pool);
        cached = { at: now, value };
        value.catch(() => {
          if (cached?.value === value) cached = undefined;
        });
      }
      return cached.value;
    },
    invalidate(): void {
      cached = undefined;
    },
  };
}
