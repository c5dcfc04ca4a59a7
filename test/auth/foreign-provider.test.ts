import t from "tap";
import { startAccountsAnnal } from "../support/accounts.ts";
import { Browserless } from "../support/browserless.ts";
import {
  callbackFromProvider,
  FOREIGN_PERSON,
  startForeignProvider,
} from "../support/foreign-provider.ts";

t.setTimeout(180_000);

// A provider annal does not own (oauth2-mock-server), over http on loopback: nothing it
// answers is trusted for the transport's sake, every ID token is checked against its JWKS.
const provider = await startForeignProvider(t);
const app = await startAccountsAnnal(t, {
  oidcToml: `[auth.oidc]
issuer = "${provider.issuer}"
clientId = "annalforeign"
clientSecret = "\${LDAP_PASSWORD}"
origin = "foreign-sso"`,
});
const host = new URL(app.url).host;

/** Requests the callback and reads the error page's code, if any. */
const answer = async (browser: Browserless, callback: URL) => {
  const response = await browser.request(callback.href);
  const text = await response.text();
  return { status: response.status, code: /ANNAL_[A-Z_]+/.exec(text)?.[0], text };
};

t.test("a person of the foreign provider signs in and /auth/session names them", async (t) => {
  const browser = new Browserless();
  const callback = await callbackFromProvider(browser, app.url);
  const back = await browser.request(callback.href);
  t.equal(back.status, 303);
  t.equal(back.headers.get("location"), "/app", "lands in the web application");
  const cookie = browser.cookie(host, "service_session");
  t.match(cookie, /^[A-Za-z0-9_-]{43}$/, "the session cookie is set");
  const session = await browser.request(`${app.url}/auth/session`);
  t.equal(session.status, 200);
  t.match(await session.text(), /signed in as <strong id="who">Jane Doe<\/strong>/);
  const { body } = await app.graphql(`{ viewer { authInfo { person { name origin subject } } } }`, {
    cookie: `service_session=${cookie}`,
  });
  t.same(body.data.viewer.authInfo.person, {
    name: FOREIGN_PERSON.preferred_username,
    origin: "foreign-sso",
    subject: FOREIGN_PERSON.sub,
  });
});

for (const how of ["published kid", "unknown kid", "unsigned"] as const) {
  t.test(
    `an ID token not signed by the provider's published key (${how}) is refused`,
    async (t) => {
      const browser = new Browserless();
      const callback = await callbackFromProvider(browser, app.url);
      provider.forgeNextIdToken(how);
      const { status, code } = await answer(browser, callback);
      t.equal(status, 401);
      t.equal(code, "ANNAL_SIGN_IN_FAILED");
      t.notOk(browser.cookie(host, "service_session"), "no session");
    },
  );
}

const claimCases: [string, (claims: Record<string, unknown>) => void][] = [
  [
    "an expired ID token",
    (claims) => {
      const now = Math.floor(Date.now() / 1000);
      Object.assign(claims, { iat: now - 7200, nbf: now - 7200, exp: now - 3600 });
    },
  ],
  ["an ID token for another client (aud)", (claims) => void (claims.aud = "someoneelse")],
  ["an ID token of another issuer (iss)", (claims) => void (claims.iss = "http://127.0.0.1:1")],
  ["an ID token with another sign-in's nonce", (claims) => void (claims.nonce = "not-ours")],
];
for (const [name, alter] of claimCases) {
  t.test(`${name} is refused`, async (t) => {
    const browser = new Browserless();
    const callback = await callbackFromProvider(browser, app.url);
    provider.alterNextIdToken(alter);
    const { status, code } = await answer(browser, callback);
    t.equal(status, 401);
    t.equal(code, "ANNAL_SIGN_IN_FAILED");
    t.notOk(browser.cookie(host, "service_session"), "no session");
  });
}

t.test("a wrong state is refused", async (t) => {
  const browser = new Browserless();
  const callback = await callbackFromProvider(browser, app.url);
  callback.searchParams.set("state", "not-the-state-annal-sent");
  const { status, code } = await answer(browser, callback);
  t.equal(status, 400);
  t.equal(code, "ANNAL_SIGN_IN_STATE_INVALID");
  t.notOk(browser.cookie(host, "service_session"));
});

t.test("a callback in a browser that did not start the sign-in is refused", async (t) => {
  const callback = await callbackFromProvider(new Browserless(), app.url);
  const victim = new Browserless();
  const { status, code } = await answer(victim, callback);
  t.equal(status, 400);
  t.equal(code, "ANNAL_SIGN_IN_STATE_INVALID");
  t.notOk(victim.cookie(host, "service_session"), "login CSRF: no session");
});

t.test("a replayed callback is refused", async (t) => {
  const browser = new Browserless();
  const callback = await callbackFromProvider(browser, app.url);
  const flowCookie = browser.cookie(host, "service_signin")!;
  t.equal((await browser.request(callback.href)).status, 303, "the first use signs in");
  // The replay carries the flow cookie again, as an attacker who copied it would.
  browser.setCookie(host, "service_signin", flowCookie);
  const { status, code } = await answer(browser, callback);
  t.equal(status, 400);
  t.equal(code, "ANNAL_SIGN_IN_STATE_INVALID");
});

t.test("error=access_denied from the provider is a refused sign-in", async (t) => {
  const browser = new Browserless();
  provider.refuseNextAuthorization();
  const callback = await callbackFromProvider(browser, app.url);
  t.equal(callback.searchParams.get("error"), "access_denied");
  const { status, code, text } = await answer(browser, callback);
  t.equal(status, 401);
  t.equal(code, "ANNAL_SIGN_IN_FAILED");
  t.match(text, /did not sign you in/);
  t.notOk(browser.cookie(host, "service_session"));
});
