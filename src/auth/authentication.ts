import type { IncomingHttpHeaders } from "node:http";
import type { FastifyRequest, onRequestHookHandler } from "fastify";
import type { Pool } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";
import {
  ACCESS_FUNCTIONS,
  authenticateBearer,
  type AccessFunction,
  type ServiceAccount,
} from "./accounts.ts";
import { ForbiddenError, UnauthenticatedError } from "./errors.ts";

/** Who makes a request, as the one authentication found them. */
export interface Caller {
  readonly account: ServiceAccount;
  /** How the request proved it. */
  readonly credential: "bearer";
  /** What the caller may do. */
  readonly access: readonly AccessFunction[];
}

declare module "fastify" {
  interface FastifyRequest {
    /** Set by an `Authentication.require` hook once the request is authenticated. */
    caller?: Caller;
  }
}

/** The one way every channel learns who makes a request and whether they may. */
export interface Authentication {
  /**
   * The caller behind the request's credentials; `UnauthenticatedError` (401) for none, or
   * for credentials that name no active account.
   */
  authenticate(request: { readonly headers: IncomingHttpHeaders }): Promise<Caller>;
  /**
   * A Fastify `onRequest` hook that lets a request through only when it is authenticated and
   * its caller has every one of `access` (401, else 403), and sets `request.caller`. At
   * least one access function must be named: there is no guard that lets everyone in.
   *
   * @example
   * scope.addHook("onRequest", authentication.require("operator"));
   */
  require(...access: [AccessFunction, ...AccessFunction[]]): onRequestHookHandler;
}

export interface AuthenticationOptions {
  readonly pool: Pool;
}

/**
 * Creates the authentication every channel uses (REST, GraphQL, failed work and what comes
 * after). It denies by default: a route is reached only through `require`, which needs named
 * access functions, and `callerOf` refuses a request that no guard authenticated. Options
 * and guards are checked when they are created, not when the first request comes.
 */
export function createAuthentication(options: AuthenticationOptions): Authentication {
  if (!options?.pool) {
    throw new AnnalError("ANNAL_INTERNAL", "createAuthentication needs the database pool");
  }
  const { pool } = options;
  const authenticate = async (request: { readonly headers: IncomingHttpHeaders }) => {
    const account = await authenticateBearer(pool, request.headers.authorization);
    return { account, credential: "bearer", access: account.access } satisfies Caller;
  };
  return {
    authenticate,
    require(...access) {
      const unknown = access.filter((fn) => !(ACCESS_FUNCTIONS as readonly string[]).includes(fn));
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

/** The caller a guard authenticated; a request no guard let through is refused (401). */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new UnauthenticatedError("missing");
  return request.caller;
}

/** What an access check reads of a caller (a GraphQL viewer is one too). */
type Holder = Pick<Caller, "account" | "access">;

export function hasAccess(caller: Holder, access: AccessFunction): boolean {
  return caller.access.includes(access);
}

/** Refuses with 403 (naming the missing access function) unless `caller` has `access`. */
export function assertAccess(caller: Holder, access: AccessFunction): void {
  if (!hasAccess(caller, access)) throw new ForbiddenError(access, caller.account.name);
}
