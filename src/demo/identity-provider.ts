import { generateKeyPairSync, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Configuration } from "oidc-provider";
import { directoryGroupsOf } from "../auth/index.ts";
import type { Pool } from "../db/index.ts";
import { eq, type DirectoryClient } from "../directory/index.ts";
import { AnnalError } from "../errors/index.ts";
import type { Logger } from "../logger.ts";
import { interactionPage } from "./identity-provider-page.ts";
import { demoProviderSecrets, postgresAdapter } from "./identity-provider-store.ts";
import { importOidcProvider } from "./provider-module.ts";

export interface DemoIdentityProviderOptions {
  readonly port: number;
  /** The one client: annal itself. */
  readonly clientId: string;
  readonly clientSecret: string;
  /** annal's `/auth/callback`. */
  readonly redirectUri: string;
  /** The directory whose people sign in (found by uid, checked by a bind). */
  readonly directory: DirectoryClient;
  /** Where people are found, and their groups. */
  readonly base: string;
  /**
   * annal's database, where the provider keeps its grants, sessions, tokens and keys
   * (`demo_oidc`), so sign-ins survive a restart. Without it (a test's own provider), all of
   * that lives in memory and goes with the process.
   */
  readonly pool?: Pool;
  /** Where the provider library's runtime warning is said instead (`importOidcProvider`). */
  readonly log?: Logger;
}

export interface DemoIdentityProvider {
  readonly issuer: string;
  stop(): Promise<void>;
}

/** Wrong passwords one login may give in a row before it has to wait a minute. */
const FAILURES_BEFORE_WAIT = 5;

/**
 * A real OpenID provider (oidc-provider) for the demo and the tests, on a loopback port:
 * its users are the directory's people, each signing in with their uid and password (checked
 * by an LDAP bind); its ID tokens and userinfo carry `preferred_username`, `name`, `email`
 * and `groups` (the group DNs the person is a member of, nested groups resolved). It has one
 * client, annal, which must use PKCE; consent is implied for it.
 */
export async function startDemoIdentityProvider(
  options: DemoIdentityProviderOptions,
): Promise<DemoIdentityProvider> {
  const issuer = `http://127.0.0.1:${options.port}`;
  const { directory, base } = options;
  const personByUid = async (uid: string) => {
    for await (const page of directory.search(base, {
      filter: eq("uid", uid),
      attributes: ["uid", "cn", "displayName", "mail"],
      sizeLimit: 2,
      paged: false,
    })) {
      if (page.length === 1) return page[0];
    }
    return undefined;
  };
  const text = (values: unknown) =>
    Array.isArray(values) && typeof values[0] === "string" ? values[0] : undefined;

  const secrets = options.pool ? await demoProviderSecrets(options.pool) : freshSecrets();
  const configuration: Configuration = {
    ...(options.pool ? { adapter: postgresAdapter(options.pool) } : {}),
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_basic",
      },
    ],
    jwks: {
      keys: [{ ...secrets.signingKey, kid: "demo", use: "sig", alg: "RS256" }] as never,
    },
    cookies: { keys: [secrets.cookieKey] },
    pkce: { required: () => true },
    scopes: ["openid", "profile", "email", "groups", "offline_access"],
    claims: {
      openid: ["sub"],
      profile: ["name", "preferred_username"],
      email: ["email"],
      groups: ["groups"],
    },
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    ttl: {
      AccessToken: 3600,
      AuthorizationCode: 60,
      IdToken: 3600,
      Interaction: 600,
      Grant: 86_400,
      Session: 86_400,
      RefreshToken: 86_400,
    },
    // The demo's one client is annal itself: what it asks for is granted without a question.
    async loadExistingGrant(ctx) {
      const { client, session } = ctx.oidc;
      if (client === undefined || session?.accountId === undefined) return undefined;
      const grantId = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
      if (grantId) {
        const found = await ctx.oidc.provider.Grant.find(grantId);
        if (found) return found;
      }
      const grant = new ctx.oidc.provider.Grant({
        clientId: client.clientId,
        accountId: session.accountId,
      });
      grant.addOIDCScope("openid profile email groups offline_access");
      await grant.save();
      return grant;
    },
    async findAccount(_ctx, sub) {
      const entry = await personByUid(sub);
      if (entry === undefined) return undefined;
      return {
        accountId: sub,
        async claims() {
          const { groups } = await directoryGroupsOf(directory, base, entry.dn, 100_000);
          return {
            sub,
            preferred_username: text(entry.attributes.uid) ?? sub,
            name: text(entry.attributes.displayName) ?? text(entry.attributes.cn),
            email: text(entry.attributes.mail),
            groups,
          };
        },
      };
    },
    async renderError(ctx, out) {
      ctx.type = "html";
      ctx.body = interactionPage({ error: `${out.error}: ${out.error_description ?? ""}` });
    },
  };
  // Imported here, not at the top: only the demo and the tests load the provider.
  const { default: Provider } = await importOidcProvider(options.log);
  const provider = new Provider(issuer, configuration);
  const failures = new Map<string, { count: number; until: number }>();

  const interaction = async (req: IncomingMessage, res: ServerResponse) => {
    const details = await provider.interactionDetails(req, res);
    if (req.method === "GET") {
      send(res, 200, interactionPage({ uid: details.uid }));
      return;
    }
    const form = new URLSearchParams(await body(req));
    const login = (form.get("login") ?? "").trim();
    const password = form.get("password") ?? "";
    const key = login.toLowerCase();
    const failed = failures.get(key);
    if (failed && failed.count >= FAILURES_BEFORE_WAIT && failed.until > Date.now()) {
      send(
        res,
        429,
        interactionPage({
          uid: details.uid,
          login,
          error: "Too many wrong passwords; wait a minute.",
        }),
      );
      return;
    }
    const entry = login === "" ? undefined : await personByUid(login);
    if (entry === undefined || !(await directory.checkPassword(entry.dn, password))) {
      failures.set(key, { count: (failed?.count ?? 0) + 1, until: Date.now() + 60_000 });
      send(
        res,
        401,
        interactionPage({ uid: details.uid, login, error: "The login or the password is wrong." }),
      );
      return;
    }
    failures.delete(key);
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: text(entry.attributes.uid) ?? login } },
      { mergeWithLastSubmission: false },
    );
  };

  const callback = provider.callback();
  const server = createServer((req, res) => {
    const url = req.url ?? "/";
    if (url.startsWith("/interaction/")) {
      interaction(req, res).catch((error: unknown) => {
        const message = error instanceof Error ? error.message : "the sign-in failed";
        send(res, 400, interactionPage({ error: message }));
      });
      return;
    }
    void callback(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new AnnalError(
          error.code === "EADDRINUSE" ? "ANNAL_PORT_IN_USE" : "ANNAL_SIGN_IN_UNAVAILABLE",
          `the demo OpenID provider cannot listen on 127.0.0.1:${options.port}: ${error.code ?? error.message}`,
          { cause: error },
        ),
      ),
    );
    server.listen(options.port, "127.0.0.1", () => resolve());
  });
  return {
    issuer,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function freshSecrets() {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return {
    signingKey: privateKey.export({ format: "jwk" }),
    cookieKey: randomBytes(32).toString("base64url"),
  };
}

function send(res: ServerResponse, status: number, html: string): void {
  res.statusCode = status;
  res.setHeader("content-type", "text/html; charset=utf-8");
  res.setHeader("cache-control", "no-store");
  res.end(html);
}

async function body(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) {
    text += String(chunk);
    if (text.length > 16_384) throw new Error("the form is too large");
  }
  return text;
}
