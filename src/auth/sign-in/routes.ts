import cookie from "@fastify/cookie";
import formbody from "@fastify/formbody";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AuthConfig } from "../../config/index.ts";
import type { Pool } from "../../db/index.ts";
import { AnnalError } from "../../errors/index.ts";
import type { Logger } from "../../logger.ts";
import type { EventStore } from "../../store/index.ts";
import type { Authentication } from "../authentication.ts";
import { endSession, SESSION_COOKIE } from "../sessions.ts";
import { assertUnderLimit, countAttempt } from "./attempts.ts";
import { completeSignIn } from "./complete.ts";
import { saveFlow, takeFlow } from "./flows.ts";
import type { DirectoryOrigin } from "./ldap.ts";
import type { OidcOrigin } from "./oidc.ts";
import { errorPage, loginPage, PAGE_CSP, sessionPage, signedOutPage } from "./pages.ts";

/** The cookie that ties a provider's answer to the browser that asked (login CSRF). */
const FLOW_COOKIE = "service_signin";

/** What an error means to the one who made the request (the server's one classifier). */
export interface ErrorReading {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly hint: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
  readonly internal: boolean;
}

export interface SignInRoutesOptions {
  readonly pool: Pool;
  readonly store: EventStore;
  readonly auth: AuthConfig;
  /** `[server] publicUrl` (or the default), without a trailing slash. */
  readonly publicUrl: string;
  readonly authentication: Authentication;
  readonly oidc?: OidcOrigin;
  readonly ldap?: DirectoryOrigin;
  /** The server's classifier: sign-in pages show what it reads of an error. */
  readonly classify: (error: unknown, requestId: string) => ErrorReading;
  readonly log: Logger;
}

/**
 * Sign-in at `/auth/login`: by OpenID Connect (`/auth/login/oidc` → the provider →
 * `/auth/callback`) and by the directory's login form (`POST /auth/login/ldap`); who is signed
 * in at `/auth/session`; `POST /auth/logout`. Each sign-in sets a new `service_session`
 * cookie (HttpOnly, SameSite=Lax, Secure over https). Attempts are counted per address and,
 * for the form, failures per login. Errors are pages of their own, never a 500 for bad input.
 */
export function signInRoutes(options: SignInRoutesOptions) {
  const { pool, store, auth } = options;
  const publicOrigin = new URL(options.publicUrl).origin;
  const secure = options.publicUrl.startsWith("https:");
  const limits = auth.rateLimit;
  const policy = auth.session;

  const sessionCookie = (reply: FastifyReply, value: string) =>
    reply.setCookie(SESSION_COOKIE, value, {
      path: "/",
      httpOnly: true,
      sameSite: "lax",
      secure,
      maxAge: Math.floor(policy.absoluteTimeout / 1000),
    });
  const html = (reply: FastifyReply, status: number, body: string) =>
    reply
      .code(status)
      .type("text/html; charset=utf-8")
      .header("content-security-policy", PAGE_CSP)
      .header("cache-control", "no-store")
      .send(body);
  const perAddress = (request: FastifyRequest) =>
    countAttempt(pool, `address:${request.ip}`, limits.perAddress, limits.window);
  const loginPageOf = (returnTo: string, extra: { error?: ErrorReading; login?: string } = {}) =>
    loginPage({
      ...(options.oidc ? { oidc: options.oidc.origin } : {}),
      ldap: options.ldap !== undefined,
      returnTo,
      ...(extra.error
        ? {
            error: {
              code: extra.error.code,
              message: extra.error.message,
              ...(extra.error.hint ? { hint: extra.error.hint } : {}),
            },
          }
        : {}),
      ...(extra.login === undefined ? {} : { login: extra.login }),
    });
  /** A login form posted from another site would sign the victim in as the attacker. */
  const assertOwnOrigin = (request: FastifyRequest) => {
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== publicOrigin) {
      throw new AnnalError("ANNAL_CSRF_REJECTED", "the form was posted from another site");
    }
  };

  return async (server: FastifyInstance): Promise<void> => {
    await server.register(cookie);
    await server.register(formbody, { bodyLimit: 16_384 });

    server.setErrorHandler((error, request, reply) => {
      const reading = options.classify(error, request.id);
      if (reading.internal) request.log.error({ err: error }, "sign-in failed");
      else request.log.info({ code: reading.code }, reading.message);
      reply.headers(reading.headers);
      return html(
        reply,
        reading.status,
        errorPage({
          code: reading.code,
          message: reading.message,
          hint: reading.hint,
          requestId: request.id,
        }),
      );
    });

    server.get("/auth/login", async (request, reply) =>
      html(reply, 200, loginPageOf(returnToOf(request.query))),
    );

    server.get("/auth/login/oidc", async (request, reply) => {
      const oidc = options.oidc;
      if (oidc === undefined) throw notConfigured("OpenID Connect ([auth.oidc])");
      await perAddress(request);
      const pending = await oidc.start();
      await saveFlow(pool, { ...pending, returnTo: returnToOf(request.query) });
      reply.setCookie(FLOW_COOKIE, pending.state, {
        path: "/auth",
        httpOnly: true,
        sameSite: "lax",
        secure,
        maxAge: 600,
      });
      return reply.redirect(pending.url.href, 302);
    });

    server.get("/auth/callback", async (request, reply) => {
      const oidc = options.oidc;
      if (oidc === undefined) throw notConfigured("OpenID Connect ([auth.oidc])");
      await perAddress(request);
      const query = request.query as Record<string, unknown>;
      const state = typeof query.state === "string" ? query.state : undefined;
      if (state === undefined || request.cookies[FLOW_COOKIE] !== state) {
        throw new AnnalError(
          "ANNAL_SIGN_IN_STATE_INVALID",
          "this sign-in was not started in this browser, or is already finished",
        );
      }
      const flow = await takeFlow(pool, state);
      reply.clearCookie(FLOW_COOKIE, { path: "/auth" });
      if (typeof query.error === "string") {
        throw new AnnalError("ANNAL_SIGN_IN_FAILED", "the identity provider did not sign you in", {
          details: { error: query.error.slice(0, 64) },
        });
      }
      const done = await oidc.finish(new URL(request.url, options.publicUrl), flow);
      const session = await completeSignIn(pool, store, {
        identity: done.identity,
        principals: done.principals,
        method: "oidc",
        address: request.ip,
        policy,
        maxPrincipals: auth.maxPrincipals,
        providerTokens: done.tokens,
      });
      request.log.info({ account: session.account.id, session: session.sessionId }, "signed in");
      sessionCookie(reply, session.cookie);
      return reply.redirect(flow.returnTo, 303);
    });

    server.post("/auth/login/ldap", async (request, reply) => {
      const ldap = options.ldap;
      if (ldap === undefined) throw notConfigured("the login form ([auth.ldap])");
      assertOwnOrigin(request);
      const body = (request.body ?? {}) as Record<string, unknown>;
      const login = typeof body.login === "string" ? body.login.trim() : "";
      const password = typeof body.password === "string" ? body.password : "";
      const returnTo = returnToOf(body);
      try {
        await perAddress(request);
        const accountKey = `account:${ldap.origin}:${login.toLowerCase()}`;
        await assertUnderLimit(pool, accountKey, limits.perAccount, limits.window);
        let signedIn;
        try {
          signedIn = await ldap.signIn(login, password);
        } catch (error) {
          if (error instanceof AnnalError && error.code === "ANNAL_SIGN_IN_FAILED") {
            await countAttempt(pool, accountKey, limits.perAccount, limits.window).catch(() => {});
          }
          throw error;
        }
        const session = await completeSignIn(pool, store, {
          identity: signedIn.identity,
          principals: signedIn.principals,
          method: "ldap",
          address: request.ip,
          policy,
          maxPrincipals: auth.maxPrincipals,
        });
        request.log.info({ account: session.account.id, session: session.sessionId }, "signed in");
        sessionCookie(reply, session.cookie);
        return reply.redirect(returnTo, 303);
      } catch (error) {
        const reading = options.classify(error, request.id);
        if (reading.internal) throw error;
        request.log.info({ code: reading.code }, "sign-in refused");
        reply.headers(reading.headers);
        return html(reply, reading.status, loginPageOf(returnTo, { error: reading, login }));
      }
    });

    server.get("/auth/session", async (request, reply) => {
      let caller;
      try {
        caller = await options.authentication.authenticate(request);
      } catch (error) {
        if (error instanceof AnnalError && error.status === 401) {
          return reply.redirect("/auth/login?returnTo=%2Fauth%2Fsession", 303);
        }
        throw error;
      }
      return html(
        reply,
        200,
        sessionPage({
          name: caller.account.name,
          displayName: caller.account.displayName,
          origin: caller.account.origin,
        }),
      );
    });

    server.get("/auth/logout", async (_request, reply) => reply.redirect("/auth/session", 303));

    server.post("/auth/logout", async (request, reply) => {
      // The cookie's own check: a cross-site form cannot sign anyone out either.
      const caller = await options.authentication
        .authenticate({ headers: request.headers, method: "POST" })
        .catch((error: unknown) => {
          if (error instanceof AnnalError && error.status === 401) return undefined;
          throw error;
        });
      if (caller?.sessionId !== undefined) {
        await endSession(pool, store, caller.sessionId, "logout", caller.account.name);
        request.log.info({ account: caller.account.id, session: caller.sessionId }, "signed out");
      }
      reply.clearCookie(SESSION_COOKIE, { path: "/" });
      return html(reply, 200, signedOutPage());
    });
  };
}

/**
 * Where to go after sign-in: a path of annal's own (never another site: no `//host`, no
 * `/\\host`, no scheme), else the web application, where a person starts.
 */
function returnToOf(source: unknown): string {
  const value = (source as Record<string, unknown> | undefined)?.returnTo;
  if (typeof value === "string" && /^\/(?![/\\])[\x21-\x7e]{0,512}$/.test(value)) return value;
  return "/app";
}

function notConfigured(what: string): AnnalError {
  return new AnnalError(
    "ANNAL_SIGN_IN_NOT_CONFIGURED",
    `signing in with ${what} is not configured`,
  );
}
