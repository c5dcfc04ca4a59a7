import { createHash, randomBytes, randomUUID } from "node:crypto";
import { withTransaction, type Pool, type PoolClient } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";
import { accountStream, annalEvent } from "../events/index.ts";
import type { EventStore } from "../store/index.ts";

/** The session cookie's name (the product documents'). */
export const SESSION_COOKIE = "service_session";

/** A cookie value: 256 random bits, base64url. */
const COOKIE_VALUE = /^[A-Za-z0-9_-]{43}$/;

export const cookieDigest = (value: string): Buffer => createHash("sha256").update(value).digest();

/** How long sessions live, in milliseconds: `[auth.session]`. */
export interface SessionPolicy {
  readonly idleTimeout: number;
  readonly absoluteTimeout: number;
}

/** Tokens of the identity provider a session keeps to refresh principals (never logged). */
export interface ProviderTokens {
  readonly accessToken?: string;
  readonly refreshToken?: string;
}

/**
 * Starts a session for `accountId`: a new cookie value (256 random bits) whose SHA-256 digest
 * alone is stored, and `SessionStarted` with the session's own id. Every sign-in starts a new
 * one, so a session id fixed before sign-in is worthless.
 */
export async function startSession(
  tx: PoolClient,
  store: EventStore,
  options: {
    readonly accountId: string;
    readonly method: "oidc" | "ldap";
    readonly address: string | undefined;
    readonly policy: SessionPolicy;
    readonly providerTokens?: ProviderTokens;
  },
): Promise<{ cookie: string; sessionId: string; expiresAt: Date }> {
  const cookie = randomBytes(32).toString("base64url");
  const sessionId = randomUUID();
  const { expires_at: expiresAt } = (
    await tx.query<{ expires_at: Date }>(
      `INSERT INTO sessions (id, digest, account_id, method, address, expires_at, provider_tokens)
       VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6::double precision / 1000), $7)
       RETURNING expires_at`,
      [
        sessionId,
        cookieDigest(cookie),
        options.accountId,
        options.method,
        options.address ?? null,
        options.policy.absoluteTimeout,
        options.providerTokens === undefined ? null : JSON.stringify(options.providerTokens),
      ],
    )
  ).rows[0]!;
  await store.appendToStream(
    accountStream(options.accountId),
    [
      annalEvent("SessionStarted", {
        accountId: options.accountId,
        sessionId,
        method: options.method,
        expiresAt: expiresAt.toISOString(),
      }),
    ],
    { tx },
  );
  return { cookie, sessionId, expiresAt };
}

/** The digest of a cookie value that can be one of ours; undefined for anything else. */
export function digestOfCookie(value: string | undefined): Buffer | undefined {
  return value !== undefined && COOKIE_VALUE.test(value) ? cookieDigest(value) : undefined;
}

/** `service_session`'s value in a `Cookie` header; undefined without one. */
export function sessionCookieOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  for (const part of header.split(";")) {
    const equals = part.indexOf("=");
    if (equals !== -1 && part.slice(0, equals).trim() === SESSION_COOKIE) {
      return part.slice(equals + 1).trim();
    }
  }
  return undefined;
}

/**
 * Ends the active session `sessionId` (`SessionEnded` with the reason and who ended it);
 * false when there is no such active session.
 */
export async function endSession(
  pool: Pool,
  store: EventStore,
  sessionId: string,
  reason: "logout" | "revoked" | "expired",
  by: string,
): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    const ended = (
      await tx.query<{ account_id: string }>(
        `UPDATE sessions SET ended_at = now(), end_reason = $2, provider_tokens = NULL
          WHERE id = $1 AND ended_at IS NULL RETURNING account_id`,
        [sessionId, reason],
      )
    ).rows[0];
    if (ended === undefined) return false;
    await store.appendToStream(
      accountStream(ended.account_id),
      [annalEvent("SessionEnded", { accountId: ended.account_id, sessionId, reason, by })],
      { tx },
    );
    return true;
  });
}

export interface SessionListing {
  readonly id: string;
  readonly accountId: string;
  readonly account: string;
  readonly origin: string;
  readonly method: string;
  readonly createdAt: Date;
  readonly lastSeenAt: Date;
  readonly expiresAt: Date;
}

/** The sessions that have not ended or expired, newest first (`annal sessions list`). */
export async function listSessions(pool: Pool, policy: SessionPolicy): Promise<SessionListing[]> {
  const rows = await pool.query<{
    id: string;
    account_id: string;
    name: string;
    origin: string;
    method: string;
    created_at: Date;
    last_seen_at: Date;
    expires_at: Date;
  }>(
    `SELECT s.id, s.account_id, a.name, a.origin, s.method, s.created_at, s.last_seen_at, s.expires_at
       FROM sessions s JOIN person_accounts a ON a.id = s.account_id
      WHERE s.ended_at IS NULL AND s.expires_at > now()
        AND s.last_seen_at > now() - make_interval(secs => $1::double precision / 1000)
      ORDER BY s.created_at DESC, s.id`,
    [policy.idleTimeout],
  );
  return rows.rows.map((r) => ({
    id: r.id,
    accountId: r.account_id,
    account: r.name,
    origin: r.origin,
    method: r.method,
    createdAt: r.created_at,
    lastSeenAt: r.last_seen_at,
    expiresAt: r.expires_at,
  }));
}

/** `annal sessions revoke <id>`: ends the session at once; its cookie is refused from now on. */
export async function revokeSession(
  pool: Pool,
  store: EventStore,
  sessionId: string,
  by: string,
): Promise<void> {
  const valid = /^[0-9a-f-]{36}$/i.test(sessionId);
  if (!valid || !(await endSession(pool, store, sessionId, "revoked", by))) {
    throw new AnnalError("ANNAL_SESSION_NOT_FOUND", `no active session has the id "${sessionId}"`);
  }
}
