import { createHash, randomBytes, randomUUID } from "node:crypto";
import { withTransaction, type Pool } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";
import { annalEvent, serviceAccountStream } from "../events/index.ts";
import type { EventStore } from "../store/index.ts";
import { accountNotFound, UnauthenticatedError } from "./errors.ts";

/**
 * The built-in access functions, which a service account's tokens may carry. `read`: the
 * REST channel and GraphQL queries; `export`: export mode of the REST channel; `write`:
 * GraphQL mutations (directory writes); `operator`: operations such as failed work;
 * `auditor`: reading who could do what (`access`). Access functions are open strings
 * beyond these: workflows and endpoints declare their own, which only the Access
 * Configuration grants.
 */
export const ACCESS_FUNCTIONS = ["read", "export", "write", "operator", "auditor"] as const;
export type AccessFunction = (typeof ACCESS_FUNCTIONS)[number];

/** What each access function lets an account do, in words a user reads back. */
export const ACCESS_MEANINGS: Readonly<Record<AccessFunction, string>> = {
  read: "REST channel and GraphQL queries",
  export: "REST exports",
  write: "GraphQL mutations, directory writes",
  operator: "operations such as failed work",
  auditor: "reading who could do what, and since when",
};

export interface ServiceAccount {
  readonly id: string;
  readonly name: string;
  readonly access: readonly AccessFunction[];
  readonly createdAt: Date;
}

const TOKEN_PREFIX = "annal_";
const NAME = /^[A-Za-z][A-Za-z0-9._-]{0,63}$/;

const digestOf = (token: string) => createHash("sha256").update(token).digest();

export function parseAccess(text: string): AccessFunction[] {
  const wanted = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = wanted.filter((a) => !(ACCESS_FUNCTIONS as readonly string[]).includes(a));
  if (wanted.length === 0 || unknown.length > 0) {
    throw new AnnalError(
      "ANNAL_ACCESS_UNKNOWN",
      unknown.length > 0
        ? `unknown access function(s): ${unknown.join(", ")}`
        : "name at least one access function",
      { status: 400, hint: `choose from ${ACCESS_FUNCTIONS.join(", ")}` },
    );
  }
  return [...new Set(wanted)] as AccessFunction[];
}

/**
 * Creates a service account with `access` and returns its first token, or adds a token to the
 * active account of that name, whose access stays as it is: changing access is
 * `changeAccess`, never a side effect of a new token. A revoked account of that name comes
 * back with `access` (it had none left). The token is shown only here; the database keeps its
 * digest and the log records that a token was issued, never the token.
 *
 * @example
 * const { account, token, accessKept } = await createToken(pool, store, { name: "ci", access: ["read"] });
 * if (accessKept) console.error(`${account.name} keeps ${account.access.join(",")}`);
 */
export async function createToken(
  pool: Pool,
  store: EventStore,
  options: { name: string; access: readonly AccessFunction[] },
): Promise<{ account: ServiceAccount; token: string; accessKept: boolean }> {
  if (!NAME.test(options.name)) {
    throw new AnnalError(
      "ANNAL_ACCOUNT_NAME_INVALID",
      `account name "${options.name}" is not valid`,
      {
        status: 400,
        hint: "use a letter, then letters, digits, '.', '_' or '-' (at most 64)",
      },
    );
  }
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;
  return withTransaction(pool, async (tx) => {
    // An active account keeps its access; only a new or revoked one takes the access given.
    // `xmax <> 0` tells an updated row from an inserted one.
    const account = await tx.query<{
      id: string;
      name: string;
      access: AccessFunction[];
      created_at: Date;
      existed: boolean;
    }>(
      `INSERT INTO service_accounts (id, name, access) VALUES ($1, $2, $3)
       ON CONFLICT (name) DO UPDATE
         SET access = CASE WHEN service_accounts.revoked_at IS NULL
                           THEN service_accounts.access ELSE EXCLUDED.access END,
             revoked_at = NULL
       RETURNING id, name, access, created_at, (xmax <> 0) AS existed`,
      [randomUUID(), options.name, options.access],
    );
    const row = account.rows[0]!;
    const tokenId = randomUUID();
    await tx.query(
      `INSERT INTO service_account_tokens (id, account_id, digest, hint) VALUES ($1, $2, $3, $4)`,
      [tokenId, row.id, digestOf(token), token.slice(0, TOKEN_PREFIX.length + 4)],
    );
    await store.appendToStream(
      serviceAccountStream(row.id),
      [
        annalEvent("ServiceAccountTokenIssued", {
          accountId: row.id,
          name: row.name,
          access: row.access,
          tokenId,
        }),
      ],
      { tx },
    );
    return {
      account: { id: row.id, name: row.name, access: row.access, createdAt: row.created_at },
      token,
      accessKept: row.existed && !sameAccess(row.access, options.access),
    };
  });
}

function sameAccess(a: readonly AccessFunction[], b: readonly AccessFunction[]): boolean {
  return a.length === b.length && a.every((fn) => b.includes(fn));
}

export interface AccountListing extends ServiceAccount {
  readonly revokedAt: Date | null;
  readonly tokens: {
    readonly hint: string;
    readonly createdAt: Date;
    readonly lastUsedAt: Date | null;
    readonly revoked: boolean;
  }[];
}

export async function listAccounts(pool: Pool): Promise<AccountListing[]> {
  const accounts = await pool.query<{
    id: string;
    name: string;
    access: AccessFunction[];
    created_at: Date;
    revoked_at: Date | null;
    tokens:
      | {
          hint: string;
          created_at: string;
          last_used_at: string | null;
          revoked_at: string | null;
        }[]
      | null;
  }>(
    `SELECT a.id, a.name, a.access, a.created_at, a.revoked_at,
            json_agg(json_build_object('hint', t.hint, 'created_at', t.created_at,
                     'last_used_at', t.last_used_at, 'revoked_at', t.revoked_at) ORDER BY t.created_at)
              FILTER (WHERE t.id IS NOT NULL) AS tokens
       FROM service_accounts a LEFT JOIN service_account_tokens t ON t.account_id = a.id
      GROUP BY a.id ORDER BY a.name`,
  );
  return accounts.rows.map((r) => ({
    id: r.id,
    name: r.name,
    access: r.access,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
    tokens: (r.tokens ?? []).map((t) => ({
      hint: `${t.hint}…`,
      createdAt: new Date(t.created_at),
      lastUsedAt: t.last_used_at ? new Date(t.last_used_at) : null,
      revoked: t.revoked_at !== null,
    })),
  }));
}

/** Revokes an account and every token it has. */
export async function revokeAccount(pool: Pool, store: EventStore, name: string): Promise<void> {
  await withTransaction(pool, async (tx) => {
    const result = await tx.query<{ id: string }>(
      "UPDATE service_accounts SET revoked_at = now() WHERE name = $1 AND revoked_at IS NULL RETURNING id",
      [name],
    );
    const id = result.rows[0]?.id;
    if (!id) throw accountNotFound(name);
    await tx.query(
      "UPDATE service_account_tokens SET revoked_at = now() WHERE account_id = $1 AND revoked_at IS NULL",
      [id],
    );
    await store.appendToStream(
      serviceAccountStream(id),
      [annalEvent("ServiceAccountRevoked", { accountId: id, name })],
      { tx },
    );
  });
}

/**
 * The account behind an `Authorization: Bearer <token>` header. Throws UnauthenticatedError
 * (401) for a missing, malformed, unknown or revoked token.
 */
export async function authenticateBearer(
  pool: Pool,
  authorization: string | undefined,
): Promise<ServiceAccount> {
  return accountOfDigest(pool, bearerDigest(authorization));
}

/** The digest of the token an `Authorization: Bearer <token>` header carries; 401 for none. */
function bearerDigest(authorization: string | undefined): Buffer {
  if (!authorization) throw new UnauthenticatedError("missing");
  const match = /^Bearer[ ]+([A-Za-z0-9_-]{1,200})\s*$/i.exec(authorization);
  if (!match || !match[1]!.startsWith(TOKEN_PREFIX)) throw new UnauthenticatedError("invalid");
  return digestOf(match[1]!);
}

/** How many tokens' verifications `cachedBearer` keeps at most. */
const CACHED_TOKENS = 1000;

/**
 * `authenticateBearer` whose verifications are kept `ttlMs` (by the token's digest): a
 * request with a token verified less than that ago is not looked up again, so a revoked token
 * (`annal token revoke`, from any process) is refused within `ttlMs` of its revocation, as a
 * changed Access Configuration takes effect within its cache's (`cachedGrants`). Refusals are
 * not kept: a token created a moment ago authenticates at once.
 *
 * @example
 * const bearer = cachedBearer(pool, 1000);
 * const account = await bearer.authenticate(request.headers.authorization);
 */
export function cachedBearer(pool: Pool, ttlMs = 1000) {
  const cached = new Map<string, { at: number; value: Promise<ServiceAccount> }>();
  return {
    authenticate(authorization: string | undefined): Promise<ServiceAccount> {
      const digest = bearerDigest(authorization);
      const key = digest.toString("base64");
      const now = Date.now();
      const kept = cached.get(key);
      if (kept !== undefined && now - kept.at <= ttlMs) return kept.value;
      cached.delete(key);
      // The oldest first: a Map iterates in insertion order.
      while (cached.size >= CACHED_TOKENS) cached.delete(cached.keys().next().value!);
      const value = accountOfDigest(pool, digest);
      cached.set(key, { at: now, value });
      value.catch(() => {
        if (cached.get(key)?.value === value) cached.delete(key);
      });
      return value;
    },
  };
}

/** The active account whose active token has this digest; 401 for none. */
async function accountOfDigest(pool: Pool, digest: Buffer): Promise<ServiceAccount> {
  const result = await pool.query<{
    token_id: string;
    stale: boolean;
    id: string;
    name: string;
    access: AccessFunction[];
    created_at: Date;
  }>(
    `SELECT t.id AS token_id,
            (t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute') AS stale,
            a.id, a.name, a.access, a.created_at
       FROM service_account_tokens t JOIN service_accounts a ON a.id = t.account_id
      WHERE t.digest = $1 AND t.revoked_at IS NULL AND a.revoked_at IS NULL`,
    [digest],
  );
  const row = result.rows[0];
  if (!row) throw new UnauthenticatedError("invalid");
  // Minute resolution is enough for "last used", and spares a write on every request.
  if (row.stale) {
    await pool.query("UPDATE service_account_tokens SET last_used_at = now() WHERE id = $1", [
      row.token_id,
    ]);
  }
  return { id: row.id, name: row.name, access: row.access, createdAt: row.created_at };
}
