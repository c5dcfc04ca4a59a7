import t from "tap";
import { oidcOrigin } from "../../src/auth/index.ts";
import { parseConfig } from "../../src/config/index.ts";
import { FOREIGN_PERSON, startForeignProvider } from "../support/foreign-provider.ts";

t.setTimeout(120_000);

const SECRET = "s3cret:with/odd+chars";
const REDIRECT = "http://127.0.0.1:9/auth/callback";

/**
 * One sign-in through annal's OpenID origin at a foreign provider (oauth2-mock-server):
 * start, the provider's redirect back (never requested), finish. Returns the token request
 * as the provider saw it.
 */
async function signIn(issuer: string, lines: string) {
  const config = parseConfig(
    `[auth.oidc]
issuer = "${issuer}"
clientId = "annalclient"
${lines}`,
    { path: "annal.toml", env: { SECRET } },
  );
  const origin = oidcOrigin({
    config: config.auth.oidc!,
    redirectUri: REDIRECT,
    maxPrincipals: 10,
  });
  const pending = await origin.start();
  const authorized = await fetch(pending.url, { redirect: "manual" });
  const callback = new URL(authorized.headers.get("location")!);
  return { origin, pending, callback };
}

async function tokenRequestOf(
  provider: Awaited<ReturnType<typeof startForeignProvider>>,
  lines: string,
) {
  const { origin, pending, callback } = await signIn(provider.issuer, lines);
  const seen = provider.nextTokenRequest();
  const done = await origin.finish(callback, pending);
  return { done, request: await seen };
}

const basic = `Basic ${Buffer.from(`annalclient:${encodeURIComponent(SECRET)}`).toString("base64")}`;

t.test("each configured method is how annal authenticates at the token endpoint", async (t) => {
  const provider = await startForeignProvider(t);

  const asBasic = await tokenRequestOf(
    provider,
    `clientSecret = "\${SECRET}"\ntokenEndpointAuthMethod = "client_secret_basic"`,
  );
  t.equal(asBasic.done.identity.subject, FOREIGN_PERSON.sub, "signed in");
  t.equal(asBasic.request.authorization, basic, "client_secret_basic: the Authorization header");
  t.equal(asBasic.request.body.client_secret, undefined, "and no secret in the body");

  const asPost = await tokenRequestOf(
    provider,
    `clientSecret = "\${SECRET}"\ntokenEndpointAuthMethod = "client_secret_post"`,
  );
  t.equal(asPost.done.identity.subject, FOREIGN_PERSON.sub, "signed in");
  t.equal(asPost.request.authorization, undefined, "client_secret_post: no Authorization header");
  t.match(asPost.request.body, { client_id: "annalclient", client_secret: SECRET });

  const asPublic = await tokenRequestOf(provider, `tokenEndpointAuthMethod = "none"`);
  t.equal(asPublic.done.identity.subject, FOREIGN_PERSON.sub, "signed in");
  t.equal(asPublic.request.authorization, undefined, "none: no Authorization header");
  t.equal(asPublic.request.body.client_secret, undefined, "none: no secret");
  t.equal(asPublic.request.body.client_id, "annalclient");
  t.match(asPublic.request.body.code_verifier, /^[A-Za-z0-9_~.-]{43,128}$/, "PKCE proves it");
});

t.test("without a configured method, the provider's metadata chooses", async (t) => {
  const postOnly = await startForeignProvider(t, { authMethods: ["client_secret_post"] });
  const asPost = await tokenRequestOf(postOnly, `clientSecret = "\${SECRET}"`);
  t.equal(asPost.request.authorization, undefined);
  t.equal(asPost.request.body.client_secret, SECRET, "the one it lists");

  const both = await startForeignProvider(t, {
    authMethods: ["client_secret_post", "client_secret_basic"],
  });
  const preferred = await tokenRequestOf(both, `clientSecret = "\${SECRET}"`);
  t.equal(preferred.request.authorization, basic, "client_secret_basic first when both");

  const silent = await startForeignProvider(t, { authMethods: undefined });
  const byDefault = await tokenRequestOf(silent, `clientSecret = "\${SECRET}"`);
  t.equal(byDefault.request.authorization, basic, "RFC 8414's default: client_secret_basic");

  const publicOnly = await startForeignProvider(t, { authMethods: ["none"] });
  const noSecret = await tokenRequestOf(publicOnly, "");
  t.equal(noSecret.request.authorization, undefined, "no secret configured: a public client");
  t.equal(noSecret.request.body.client_secret, undefined);

  const jwtOnly = await startForeignProvider(t, { authMethods: ["private_key_jwt"] });
  await t.rejects(signIn(jwtOnly.issuer, `clientSecret = "\${SECRET}"`), {
    code: "ANNAL_SIGN_IN_UNAVAILABLE",
    message:
      /takes a client secret by none of client_secret_basic, client_secret_post \(it lists private_key_jwt\)/,
  });
});
