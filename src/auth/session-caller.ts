import type { AuthConfig } from "../config/index.ts";
import { normalizeDN } from "../directory/index.ts";
import { withTransaction, type Pool } from "../db/index.ts";
import type { Logger } from "../logger.ts";
import type { EventStore } from "../store/index.ts";
import { buildCaller, type ActiveGrants, type Caller } from "./caller.ts";
import { UnauthenticatedError } from "./errors.ts";
import {
  recordPrincipals,
  recordRefreshFailure,
  type FoundPrincipals,
  type PersonAccount,
} from "./persons.ts";
import { endSession, type ProviderTokens } from "./sessions.ts";

/**
 * How the principals of an origin's people are asked for again: the identity provider behind
 * the origin (the directory's groups, an OpenID provider's groups claim). Throws when the
 * provider cannot be reached or will not answer.
 */
export interface PrincipalSource {
  refresh(
    account: PersonAccount,
    tokens: ProviderTokens | undefined,
  ): Promise<FoundPrincipals & { readonly tokens?: ProviderTokens }>;
}

/** What authenticating people by their session needs. */
export interface PeopleOptions {
  readonly store: EventStore;
  readonly auth: Pick<AuthConfig, "maxPrincipals" | "principalsRefresh" | "session">;
  /** Principal sources by origin; an origin without one keeps the principals of its sign-in. */
  readonly sources: ReadonlyMap<string, PrincipalSource>;
  readonly log?: Logger;
}

interface SessionRow {
  session_id: string;
  ended: boolean;
  expired: boolean;
  touch: boolean;
  provider_tokens: ProviderTokens | null;
  account_id: string;
  origin: string;
  subject: string;
  name: string;
  display_name: string | null;
  dn: string | null;
  principals: string[] | null;
  principal_count: number | null;
  over_limit: boolean | null;
  stale: boolean | null;
  refresh_failure: string | null;
}

/**
 * The caller behind a session cookie's digest: the person, their principals (refreshed from
 * their origin's provider when older than `[auth] principalsRefresh`), and their access from
 * the active grants. An unknown digest, an ended session and an expired one (idle or
 * absolute; recorded as `SessionEnded` with reason `expired`) are refused with 401.
 */
export function sessionAuthenticator(pool: Pool, people: PeopleOptions) {
  const refreshing = new Map<string, Promise<void>>();
  // When each account's failed refresh was last logged: once per account per interval.
  const failureLogged = new Map<string, number>();
  const { auth } = people;
  // Minute resolution for "last seen", finer when the idle timeout is short.
  const touchAfterMs = Math.min(60_000, Math.floor(auth.session.idleTimeout / 10));

  const refresh = (row: SessionRow, account: PersonAccount): Promise<void> => {
    const source = people.sources.get(row.origin);
    if (source === undefined) return Promise.resolve();
    let running = refreshing.get(row.account_id);
    if (running === undefined) {
      running = (async () => {
        try {
          const found = await source.refresh(account, row.provider_tokens ?? undefined);
          await withTransaction(pool, async (tx) => {
            await recordPrincipals(
              tx,
              people.store,
              row.account_id,
              found,
              auth.maxPrincipals,
              "refresh",
            );
            if (found.tokens !== undefined) {
              await tx.query("UPDATE sessions SET provider_tokens = $2 WHERE id = $1", [
                row.session_id,
                JSON.stringify(found.tokens),
              ]);
            }
          });
        } catch (error) {
          const failure = refreshFailure(error, row.origin);
          const logged = failureLogged.get(row.account_id);
          if (logged === undefined || Date.now() - logged >= auth.principalsRefresh) {
            failureLogged.set(row.account_id, Date.now());
            people.log?.warn(
              { account: row.account_id, name: row.name, origin: row.origin, failure },
              `principals of ${row.name} could not be refreshed: ${failure}; authority is unconfirmed until they are (logged once per [auth] principalsRefresh)`,
            );
          }
          await recordRefreshFailure(pool, row.account_id, failure);
          return;
        }
        failureLogged.delete(row.account_id);
      })().finally(() => refreshing.delete(row.account_id));
      refreshing.set(row.account_id, running);
    }
    return running;
  };

  const read = async (digest: Buffer) =>
    (
      await pool.query<SessionRow>(
        `SELECT s.id AS session_id, s.ended_at IS NOT NULL AS ended,
                (s.expires_at <= now()
                  OR s.last_seen_at <= now() - make_interval(secs => $2::double precision / 1000)) AS expired,
                s.last_seen_at < now() - make_interval(secs => $3::double precision / 1000) AS touch,
                s.provider_tokens, a.id AS account_id, a.origin, a.subject, a.name, a.display_name, a.dn,
                p.principals, p.principal_count, p.over_limit, p.refresh_failure,
                p.refreshed_at < now() - make_interval(secs => $4::double precision / 1000) AS stale
           FROM sessions s JOIN person_accounts a ON a.id = s.account_id
           LEFT JOIN account_principals p ON p.account_id = a.id
          WHERE s.digest = $1`,
        [digest, auth.session.idleTimeout, touchAfterMs, auth.principalsRefresh],
      )
    ).rows[0];

  return async (digest: Buffer, grants: ActiveGrants | undefined): Promise<Caller> => {
    let row = await read(digest);
    if (row === undefined) throw new UnauthenticatedError("session-invalid");
    if (row.ended) throw new UnauthenticatedError("session-ended");
    if (row.expired) {
      await endSession(pool, people.store, row.session_id, "expired", "annal");
      throw new UnauthenticatedError("session-expired");
    }
    if (row.touch) {
      await pool.query("UPDATE sessions SET last_seen_at = now() WHERE id = $1", [row.session_id]);
    }
    const account: PersonAccount = {
      id: row.account_id,
      origin: row.origin,
      subject: row.subject,
      name: row.name,
      displayName: row.display_name,
      dn: row.dn,
    };
    if (row.stale !== false) {
      await refresh(row, account);
      row = (await read(digest)) ?? row;
    }
    const stillStale = row.stale !== false;
    const own = [
      `account:${account.id}`,
      ...(account.dn === null ? [] : [normalizeDN(account.dn)]),
    ];
    return buildCaller({
      account: {
        id: account.id,
        kind: "person",
        name: account.name,
        origin: account.origin,
        subject: account.subject,
        ...(account.displayName === null ? {} : { displayName: account.displayName }),
        dn: account.dn,
      },
      credential: "session",
      sessionId: row.session_id,
      principals: [...new Set([...(row.principals ?? []), ...own])],
      ownAccess: [],
      grants,
      authority: stillStale ? "unconfirmed" : "confirmed",
      authorityProblem: stillStale ? (row.refresh_failure ?? undefined) : undefined,
      principalLimit: row.over_limit
        ? { count: row.principal_count ?? 0, limit: auth.maxPrincipals }
        : undefined,
    });
  };
}

/**
 * What went wrong with a refresh, in words for a log line and a refused command: the
 * provider's own error code when it answered with one (openid-client's `ResponseBodyError`
 * carries `error` and `error_description`), else that it could not be reached, and how.
 */
export function refreshFailure(error: unknown, origin: string): string {
  const provider = `the identity provider of origin "${origin}"`;
  // The source's own error wraps what the client met (`cause`): look through the chain.
  let code: string | undefined;
  for (let at = error as Record<string, unknown> | undefined, depth = 0; at && depth < 5; depth++) {
    if (typeof at.error === "string") {
      const description =
        typeof at.error_description === "string" ? ` (${at.error_description})` : "";
      return `${provider} answered ${at.error}${description}`;
    }
    if (code === undefined && typeof at.code === "string" && /^E[A-Z]+$/.test(at.code)) {
      code = at.code;
    }
    at = at.cause as Record<string, unknown> | undefined;
  }
  if (code !== undefined) return `${provider} could not be reached (${code})`;
  return `${provider} did not answer: ${error instanceof Error ? error.message : String(error)}`;
}
