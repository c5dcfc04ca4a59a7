import { generateKeyPairSync, sign } from "node:crypto";
import { Events, OAuth2Server } from "oauth2-mock-server";
import type { Browserless } from "./browserless.ts";

/** Who the foreign provider says signs in: in every ID token it issues. */
export const FOREIGN_PERSON = {
  sub: "jdoe-7731",
  preferred_username: "jdoe",
  name: "Jane Doe",
} as const;

export interface ForeignProvider {
  readonly server: OAuth2Server;
  /** `http://127.0.0.1:<port>`, as its discovery document says. */
  readonly issuer: string;
  /**
   * Changes the next ID token's claims (not the access token's) before it is signed, e.g.
   * an `exp` in the past or another `aud`.
   */
  alterNextIdToken(alter: (claims: Record<string, unknown>) => void): void;
  /**
   * Replaces the next token answer's ID token with one of the same claims signed by a key the
   * provider never published (its JWKS does not list it), under the published key's id or
   * another; or unsigned (`alg: none`).
   */
  forgeNextIdToken(how?: "published kid" | "unknown kid" | "unsigned"): void;
  /** The next authorization answers `error=access_denied` (the person said no). */
  refuseNextAuthorization(): void;
  /** The next token request as the provider saw it: its Authorization header and form fields. */
  nextTokenRequest(): Promise<{ authorization: string | undefined; body: Record<string, unknown> }>;
}

/**
 * An OpenID provider annal does not own: oauth2-mock-server on a loopback port, with one RS256
 * key, taking a client secret in the Authorization header or the body, or none (as its
 * discovery document says: `authMethods`). Its `/authorize` signs anyone in at once and sends
 * the browser straight back; its ID tokens name {@link FOREIGN_PERSON}. Stopped at the test's
 * end.
 */
export async function startForeignProvider(
  test: { teardown(fn: () => unknown): void },
  options: {
    /** Its discovery document's `token_endpoint_auth_methods_supported`; undefined leaves it out. */
    authMethods?: readonly string[] | undefined;
  } = { authMethods: ["client_secret_basic", "client_secret_post", "none"] },
): Promise<ForeignProvider> {
  const server = new OAuth2Server();
  await server.issuer.keys.generate("RS256");
  await server.start(0, "127.0.0.1");
  test.teardown(() => server.stop());
  const issuer = server.issuer.url!;
  const isIdToken = (payload: Record<string, unknown>) => "aud" in payload && !("scope" in payload);
  server.service.on(Events.BeforeTokenSigning, (token) => {
    if (isIdToken(token.payload)) Object.assign(token.payload, FOREIGN_PERSON);
  });
  server.service.on(Events.BeforeWellKnownOpenIdConfiguration, (answer) => {
    const metadata = answer.body as Record<string, unknown>;
    if (options.authMethods === undefined) delete metadata.token_endpoint_auth_methods_supported;
    else metadata.token_endpoint_auth_methods_supported = options.authMethods;
  });
  server.service.on(Events.BeforeUserinfo, (answer) => {
    answer.body = { sub: FOREIGN_PERSON.sub };
  });
  return {
    server,
    issuer,
    alterNextIdToken(alter) {
      const once = (token: { payload: Record<string, unknown> }) => {
        if (!isIdToken(token.payload)) return;
        server.service.off(Events.BeforeTokenSigning, once);
        alter(token.payload);
      };
      server.service.on(Events.BeforeTokenSigning, once);
    },
    forgeNextIdToken(how = "published kid") {
      // A forger who knows the claims (and the published key's id), not the private key.
      const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
      const published = (server.issuer.keys.toJSON()[0] as { kid: string }).kid;
      server.service.once(Events.BeforeResponse, (answer) => {
        const body = answer.body as Record<string, unknown>;
        const [, payload] = String(body.id_token).split(".");
        const header = {
          alg: how === "unsigned" ? "none" : "RS256",
          typ: "JWT",
          kid: how === "unknown kid" ? "forger-key" : published,
        };
        const signed = `${Buffer.from(JSON.stringify(header)).toString("base64url")}.${payload}`;
        const signature =
          how === "unsigned"
            ? ""
            : sign("sha256", Buffer.from(signed), privateKey).toString("base64url");
        answer.body = { ...body, id_token: `${signed}.${signature}` };
      });
    },
    refuseNextAuthorization() {
      server.service.once(Events.BeforeAuthorizeRedirect, (redirect) => {
        redirect.url.searchParams.delete("code");
        redirect.url.searchParams.set("error", "access_denied");
      });
    },
    nextTokenRequest() {
      return new Promise((resolve) => {
        server.service.once(Events.BeforeResponse, (_answer, request) => {
          resolve({
            authorization: request.headers.authorization,
            body: { ...(request.body as Record<string, unknown>) },
          });
        });
      });
    },
  };
}

/**
 * Starts a sign-in at annal and follows the foreign provider's redirect back to annal's
 * callback, without requesting it: returns the callback URL.
 */
export async function callbackFromProvider(browser: Browserless, annalUrl: string): Promise<URL> {
  let url = `${annalUrl}/auth/login/oidc`;
  for (let hop = 0; hop < 5; hop++) {
    const response = await browser.request(url);
    const location = response.headers.get("location");
    if (location === null) throw new Error(`no redirect at ${url}: ${response.status}`);
    const next = new URL(location, url);
    if (next.pathname === "/auth/callback") return next;
    url = next.href;
  }
  throw new Error("the provider never sent the browser back");
}
