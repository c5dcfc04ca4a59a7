import type { IncomingHttpHeaders } from "node:http";
import type { FastifyRequest, onRequestHookHandler } from "fastify";
import type { Pool } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";
import { cachedGrants } from "./access-configuration.ts";
import { ACCESS_FUNCTIONS, cachedBearer } from "./accounts.ts";
import { assertAccess, buildCaller, type Caller } from "./caller.ts";
import { UnauthenticatedError } from "./errors.ts";
import { sessionAuthenticator, type PeopleOptions } from "./session-caller.ts";
import { digestOfCookie, sessionCookieOf } from "./sessions.ts";

export type { Caller } from "./caller.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** Set by an `Authentication.require` hook once the request is authenticated. */
    caller?: Caller;
  }
}

/** What authentication reads of a request. */
export interface CredentialRequest {
  readonly headers: IncomingHttpHeaders;
  /** For the cross-site check of state-changing requests made with the session cookie. */
  readonly method?: string;
}

/** The one way every channel learns who makes a request and whether they may. */
export interface Authentication {
  /**
   * The caller behind the request's credentials: `Authorization: Bearer <token>` when the
   * request has one, else the `service_session` cookie. `UnauthenticatedError` (401) for none,
   * or for credentials that name no active account or session; `ANNAL_CSRF_REJECTED` (403)
   * for a state-changing request made with the cookie from another origin.
   */
  authenticate(request: CredentialRequest): Promise<Caller>;
  /**
   * A Fastify `onRequest` hook that lets a request through only when it is authenticated and
   * its caller has every one of `access` (401, else 403), and sets `request.caller`. At
   * least one access function must be named, and each must be declared (a built-in, or one
   * passed as `declaredAccess`): there is no guard that lets everyone in.
   *
   * @example
   * scope.addHook("onRequest", authentication.require("operator"));
   */
  require(...access: [string, ...string[]]): onRequestHookHandler;
  /** Whether sessions (people) are accepted, besides bearer tokens. */
  readonly sessions: boolean;
}

export interface AuthenticationOptions {
  readonly pool: Pool;
  /**
   * Access functions declared beyond the built-ins (by workflows and endpoints), which guards
   * may name.
   */
  readonly declaredAccess?: readonly string[];
  /** People's sessions; without, only bearer tokens authenticate. */
  readonly people?: PeopleOptions & {
    /** `[server] publicUrl`'s origin: where cookie-authenticated changes must come from. */
    readonly publicOrigin: string;
  };
  /** How long the active grants are kept before they are read again (default 1000 ms). */
  readonly grantsTtlMs?: number;
  /**
   * How long a bearer token's verification is kept before its token is looked up again
   * (default 1000 ms): a revoked token is refused within it.
   */
  readonly tokensTtlMs?: number;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Creates the authentication every channel uses (REST, GraphQL, failed work and what comes
 * after). It denies by default: a route is reached only through `require`, which needs named
 * access functions, and `callerOf` refuses a request that no guard authenticated. Options
 * and guards are checked when they are created, not when the first request comes.
 *
 * A service account's access is its tokens' plus what the active Access Configuration grants
 * to `service:<name>` or `account:<id>`; a person's is only what it grants to their
 * principals.
 */
export function createAuthentication(options: AuthenticationOptions): Authentication {
  if (!options?.pool) {
    throw new AnnalError("ANNAL_INTERNAL", "createAuthentication needs the database pool");
  }
  const { pool, people } = options;
  const grants = cachedGrants(pool, options.grantsTtlMs);
  const bearer = cachedBearer(pool, options.tokensTtlMs);
  const declared = new Set<string>([...ACCESS_FUNCTIONS, ...(options.declaredAccess ?? [])]);
  const bySession = people ? sessionAuthenticator(pool, people) : undefined;

  const authenticate = async (request: CredentialRequest): Promise<Caller> => {
    const { authorization } = request.headers;
    const cookie = sessionCookieOf(request.headers.cookie);
    if (authorization !== undefined || cookie === undefined || bySession === undefined) {
      const account = await bearer.authenticate(authorization);
      return buildCaller({
        account: {
          id: account.id,
          kind: "service",
          name: account.name,
          origin: "service",
          dn: null,
        },
        credential: "bearer",
        principals: [`account:${account.id}`, `service:${account.name}`],
        ownAccess: account.access,
        grants: await grants.get(),
        authority: "confirmed",
      });
    }
    const digest = digestOfCookie(cookie);
    if (digest === undefined) throw new UnauthenticatedError("session-invalid");
    if (request.method !== undefined && !SAFE_METHODS.has(request.method.toUpperCase())) {
      assertSameOrigin(request.headers, people!.publicOrigin);
    }
    return bySession(digest, await grants.get());
  };
  return {
    authenticate,
    sessions: bySession !== undefined,
    require(...access) {
      const unknown = access.filter((fn) => !declared.has(fn));
      if (access.length === 0 || unknown.length > 0) {
        throw new AnnalError(
          "ANNAL_INTERNAL",
          access.length === 0
            ? "a guard must name the access it requires"
            : `a guard names unknown access: ${unknown.join(", ")}`,
        );
      }
      return async (request: FastifyRequest) => {
        const caller = await authenticate(request);
        for (const fn of access) assertAccess(caller, fn);
        request.caller = caller;
      };
    },
  };
}

/**
 * Cross-site request forgery: a state-changing request that a browser sends with the
 * session cookie must say it comes from annal's own origin (`Origin`, else `Referer`).
 */
function assertSameOrigin(headers: IncomingHttpHeaders, publicOrigin: string): void {
  const origin = headers.origin ?? originOf(headers.referer);
  if (origin === publicOrigin) return;
  throw new AnnalError(
    "ANNAL_CSRF_REJECTED",
    origin === undefined
      ? "a change made with the session cookie must carry an Origin or Referer header"
      : "a change made with the session cookie must come from annal's own origin",
    { details: { expectedOrigin: publicOrigin } },
  );
}

function originOf(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** The caller a guard authenticated; a request no guard let through is refused (401). */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new UnauthenticatedError("missing");
  return request.caller;
}
