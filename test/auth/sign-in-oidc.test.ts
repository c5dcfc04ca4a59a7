import t from "tap";
import { Browserless, signInWithOidc } from "../support/browserless.ts";
import { DEMO_PASSWORD, PROSSI, startAccountsAnnal } from "../support/accounts.ts";

t.setTimeout(180_000);

// annal and its demo OpenID provider (oidc-provider), a real slapd with the demo people.
const app = await startAccountsAnnal(t);
const VIEWER = `{ viewer { id dn authInfo { person { id name displayName origin subject dn } serviceAccount { name } principals access credential authority } } }`;

t.test(
  "signing in by OpenID Connect sets service_session and GraphQL answers as the person",
  async (t) => {
    const browser = new Browserless();
    const { response, hops } = await signInWithOidc(browser, app.url, "prossi", DEMO_PASSWORD);
    t.equal(response.status, 200, "ends in the web application");
    t.equal(new URL(hops.at(-1)!).pathname, "/app");
    const session = await browser.request(`${app.url}/auth/session`);
    t.match(await session.text(), /signed in as <strong id="who">Priya Rossi<\/strong>/);
    const provider = new URL(app.issuer).host;
    t.ok(
      hops.some((hop) => new URL(hop).host === provider),
      "went through the provider",
    );
    const auth = hops.find((hop) => new URL(hop).pathname === "/auth" || hop.includes("/auth?"));
    t.ok(auth, "the provider's authorization endpoint");
    const asked = new URL(auth!).searchParams;
    t.equal(asked.get("code_challenge_method"), "S256", "PKCE");
    t.ok(asked.get("state") && asked.get("nonce"), "state and nonce");

    const set = browser.setCookies.find((c) => c.startsWith("service_session="))!;
    t.match(set, /HttpOnly/i);
    t.match(set, /SameSite=Lax/i);
    t.match(set, /Path=\//);
    t.notMatch(set, /Secure/i, "not Secure over http");
    const cookie = browser.cookie(new URL(app.url).host, "service_session")!;
    t.match(cookie, /^[A-Za-z0-9_-]{43}$/, "256 random bits");

    const { body } = await app.graphql(VIEWER, { cookie: `service_session=${cookie}` });
    t.notOk(body.errors);
    const viewer = body.data.viewer;
    t.equal(viewer.dn, PROSSI, "writes are made as the person");
    t.match(Buffer.from(viewer.id, "base64").toString(), /^Person:[0-9a-f-]{36}$/);
    t.same(viewer.authInfo.serviceAccount, null);
    t.match(viewer.authInfo.person, {
      name: "prossi",
      displayName: "Priya Rossi",
      origin: "demo-sso",
      subject: "prossi",
      dn: PROSSI,
    });
    t.equal(viewer.authInfo.credential, "session");
    t.equal(viewer.authInfo.authority, "confirmed");
    // Nested: managers → annal-operators → annal-auditors, from the provider's groups claim.
    for (const group of [
      "cn=managers,ou=groups,dc=example,dc=org",
      "cn=annal-operators,ou=roles,dc=example,dc=org",
      "cn=annal-auditors,ou=roles,dc=example,dc=org",
      "cn=engineering,ou=groups,dc=example,dc=org",
    ]) {
      t.ok(viewer.authInfo.principals.includes(group), group);
    }
    t.ok(viewer.authInfo.principals.includes(`account:${viewer.authInfo.person.id}`));
    t.same(viewer.authInfo.access, ["auditor", "export", "operator", "read", "write"]);
  },
);

t.test(
  "the cookie's value is never stored, logged or recorded; sessions are events by id",
  async (t) => {
    const browser = new Browserless();
    await signInWithOidc(browser, app.url, "prossi", DEMO_PASSWORD);
    const cookie = browser.cookie(new URL(app.url).host, "service_session")!;
    const callback = browser.setCookies.length > 0;
    t.ok(callback);
    const { rows } = await app.db.pool.query<{ dump: string }>(
      `SELECT string_agg(t::text, ' ') AS dump FROM (
       SELECT row_to_json(s)::text AS t FROM sessions s
       UNION ALL SELECT data::text || metadata::text FROM events) x`,
    );
    t.notOk(rows[0]!.dump.includes(cookie), "not in sessions nor in the log");
    const started = await app.db.pool.query<{ data: { sessionId: string } }>(
      "SELECT data FROM events WHERE type = 'SessionStarted' ORDER BY position DESC LIMIT 1",
    );
    const sessionId = started.rows[0]!.data.sessionId;
    const stored = await app.db.pool.query("SELECT 1 FROM sessions WHERE id = $1", [sessionId]);
    t.equal(stored.rowCount, 1, "the log names the session by its id");
    const logText = app.logged.text.join("\n");
    t.notOk(logText.includes(cookie), "no cookie in the log");
    t.match(
      logText,
      /\/auth\/callback\?code=\[Redacted\]&state=\[Redacted\]/,
      "code and state redacted",
    );
    for (const hop of browser.setCookies) {
      const value = hop.split(";")[0]!.split("=")[1]!;
      if (value.length > 10) t.notOk(logText.includes(value), "no cookie value of any hop");
    }
  },
);

t.test("every sign-in gets a new session id and cookie", async (t) => {
  const browser = new Browserless();
  await signInWithOidc(browser, app.url, "prossi", DEMO_PASSWORD);
  const host = new URL(app.url).host;
  const first = browser.cookie(host, "service_session");
  // The provider remembers her: the second sign-in asks nothing, and is a session of its own.
  const again = await signInWithOidc(browser, app.url, "prossi", DEMO_PASSWORD);
  t.notOk(
    again.hops.some((hop) => hop.includes("/interaction/")),
    "no form the second time",
  );
  const second = browser.cookie(host, "service_session");
  t.not(first, second);
  // Both remain valid until they end; each is its own session.
  for (const cookie of [first, second]) {
    const { body } = await app.graphql(`{ viewer { authInfo { person { name } } } }`, {
      cookie: `service_session=${cookie}`,
    });
    t.equal(body.data.viewer.authInfo.person.name, "prossi");
  }
});

t.test(
  "a replayed, forged or foreign state, and a tampered code: a clear page, never a 500",
  async (t) => {
    // Replay: the same callback a second time.
    const browser = new Browserless();
    const stopped = await signInWithOidc(browser, app.url, "prossi", DEMO_PASSWORD, {
      stopAtCallback: true,
    });
    const callback = stopped.callback!;
    const first = await browser.request(callback);
    t.equal(first.status, 303, "the first use signs in");
    const replay = await browser.request(callback);
    t.equal(replay.status, 400);
    t.match(await replay.text(), /ANNAL_SIGN_IN_STATE_INVALID/);

    // Forged: a state annal never issued.
    const forged = new URL(callback);
    forged.searchParams.set("state", "forged-state");
    const forgedAnswer = await browser.request(forged.href);
    t.equal(forgedAnswer.status, 400);
    t.match(await forgedAnswer.text(), /ANNAL_SIGN_IN_STATE_INVALID/);

    // Foreign: a callback made for another browser (its flow cookie is not ours).
    const victim = new Browserless();
    const other = await signInWithOidc(new Browserless(), app.url, "owojcik", DEMO_PASSWORD, {
      stopAtCallback: true,
    });
    const foreign = await victim.request(other.callback!);
    t.equal(foreign.status, 400, "login CSRF refused");
    t.match(await foreign.text(), /not started in this browser/);

    // Tampered code, with this browser's own state.
    const tamper = new Browserless();
    const pending = await signInWithOidc(tamper, app.url, "prossi", DEMO_PASSWORD, {
      stopAtCallback: true,
    });
    const bad = new URL(pending.callback!);
    bad.searchParams.set("code", `${bad.searchParams.get("code")}x`);
    const tampered = await tamper.request(bad.href);
    t.equal(tampered.status, 401);
    const page = await tampered.text();
    t.match(page, /ANNAL_SIGN_IN_FAILED/);
    t.match(tampered.headers.get("content-type"), /text\/html/);
    t.notOk(tamper.cookie(new URL(app.url).host, "service_session"), "no session");
    // The provider's error answer (the person said no) is a page too.
    const refused = new Browserless();
    const started = await refused.follow(`${app.url}/auth/login/oidc`);
    const state = new URL(started.hops.find((h) => h.includes("state="))!).searchParams.get(
      "state",
    )!;
    const denied = await refused.request(
      `${app.url}/auth/callback?error=access_denied&state=${encodeURIComponent(state)}`,
    );
    t.equal(denied.status, 401);
    t.match(await denied.text(), /did not sign you in/);
  },
);

t.test(
  "a wrong password at the provider is its form again, and annal sets no cookie",
  async (t) => {
    const browser = new Browserless();
    const { response } = await signInWithOidc(browser, app.url, "prossi", "wrong");
    t.equal(response.status, 401);
    t.match(await response.text(), /The login or the password is wrong/);
    t.notOk(browser.cookie(new URL(app.url).host, "service_session"));
  },
);
