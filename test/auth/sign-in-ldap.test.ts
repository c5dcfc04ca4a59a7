import t from "tap";
import { main } from "../../src/cli/main.ts";
import { Browserless, form } from "../support/browserless.ts";
import { DEMO_PASSWORD, PROSSI, startAccountsAnnal } from "../support/accounts.ts";
import { capturedOutput } from "../cli/support.ts";

t.setTimeout(180_000);

// Sign-in by an LDAP bind against the real slapd, with a low ceiling for attempts.
const app = await startAccountsAnnal(t, {
  authToml: `[auth.rateLimit]
perAccount = 3
perAddress = 40
window = "15m"`,
});
const host = new URL(app.url).host;
// The configuration's references, for the commands run in this process.
process.env.LDAP_PASSWORD = app.slapd.password;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = async (response: Response): Promise<any> => response.json();

async function signIn(browser: Browserless, login: string, password: string, origin = app.url) {
  return browser.request(`${app.url}/auth/login/ldap`, {
    method: "POST",
    body: form({ login, password, returnTo: "/auth/session" }),
    headers: { "content-type": "application/x-www-form-urlencoded", origin },
  });
}

const viewerName = async (cookie: string | undefined) =>
  app.graphql(`{ viewer { authInfo { person { name origin dn } principals access } } }`, {
    cookie: `service_session=${cookie}`,
  });

t.test("the login page offers both ways; the form signs a person in by a bind", async (t) => {
  const page = await fetch(`${app.url}/auth/login`);
  t.equal(page.status, 200);
  const html = await page.text();
  t.match(html, /Sign in with demo-sso/);
  t.match(html, /<form method="post" action="\/auth\/login\/ldap"/);
  t.match(page.headers.get("content-security-policy"), /default-src 'none'/);

  const browser = new Browserless();
  const answer = await signIn(browser, "prossi", DEMO_PASSWORD);
  t.equal(answer.status, 303);
  t.equal(answer.headers.get("location"), "/auth/session");
  const { body } = await viewerName(browser.cookie(host, "service_session"));
  t.match(body.data.viewer.authInfo.person, { name: "prossi", origin: "directory", dn: PROSSI });
  // The directory's own groups, nested ones resolved (member of groupOfNames).
  t.ok(
    body.data.viewer.authInfo.principals.includes("cn=annal-auditors,ou=roles,dc=example,dc=org"),
  );
  t.same(body.data.viewer.authInfo.access, ["auditor", "export", "operator", "read", "write"]);
});

t.test("a wrong password is the form again with a clear error; the login is kept", async (t) => {
  const browser = new Browserless();
  const answer = await signIn(browser, "owojcik", "wrong");
  t.equal(answer.status, 401);
  const html = await answer.text();
  t.match(html, /The login or the password is wrong|the login or the password is wrong/);
  t.match(html, /ANNAL_SIGN_IN_FAILED/);
  t.match(html, /value="owojcik"/);
  t.notOk(browser.cookie(host, "service_session"));
  const empty = await signIn(browser, "owojcik", "");
  t.equal(empty.status, 401, "an empty password is no anonymous bind");
  const unknown = await signIn(browser, "nobody", "x");
  t.equal(unknown.status, 401, "an unknown login looks the same");
  const injected = await signIn(browser, "*)(uid=*", "x");
  t.equal(injected.status, 401, "a login cannot change the filter");
  t.notOk(app.logged.text.join("\n").includes("wrong"), "no password in the log");
});

t.test("failures are limited per account, then the right password waits too", async (t) => {
  const browser = new Browserless();
  for (let i = 0; i < 3; i++) t.equal((await signIn(browser, "lbecker", "nope")).status, 401);
  const limited = await signIn(browser, "lbecker", DEMO_PASSWORD);
  t.equal(limited.status, 429);
  t.match(limited.headers.get("retry-after"), /^\d+$/);
  t.match(await limited.text(), /ANNAL_SIGN_IN_RATE_LIMITED/);
  // Another account from the same address is not held up by it.
  t.equal((await signIn(browser, "owojcik", DEMO_PASSWORD)).status, 303);
});

t.test("a login form posted from another site is refused", async (t) => {
  const answer = await signIn(new Browserless(), "prossi", DEMO_PASSWORD, "https://evil.example");
  t.equal(answer.status, 403);
  t.match(await answer.text(), /ANNAL_CSRF_REJECTED/);
});

t.test("cookie-authenticated changes need annal's origin, and GraphQL only JSON", async (t) => {
  const browser = new Browserless();
  await signIn(browser, "prossi", DEMO_PASSWORD);
  const cookie = `service_session=${browser.cookie(host, "service_session")}`;
  const mutation = `mutation { updatePerson(dn: "${PROSSI}", input: [{ operation: replace, changes: { title: "Head" } }]) { title } }`;
  const post = (headers: Record<string, string>, body: string) =>
    fetch(`${app.url}/graphql`, { method: "POST", headers: { cookie, ...headers }, body });
  const body = JSON.stringify({ query: mutation });
  const noOrigin = await json(await post({ "content-type": "application/json" }, body));
  t.equal(noOrigin.errors[0].extensions.code, "FORBIDDEN");
  t.match(noOrigin.errors[0].message, /Origin or Referer/);
  const elsewhere = await json(
    await post({ "content-type": "application/json", origin: "https://evil.example" }, body),
  );
  t.match(elsewhere.errors[0].message, /annal's own origin/);
  // A simple cross-site request (text/plain, a form) never reaches execution.
  const text = await post({ "content-type": "text/plain", origin: app.url }, body);
  t.equal(text.status, 400);
  t.notOk((await json(text)).data);
  const formPost = await post(
    { "content-type": "application/x-www-form-urlencoded", origin: app.url },
    `query=${encodeURIComponent(mutation)}`,
  );
  t.equal(formPost.status, 415);
  // A query by GET needs no Origin; a Referer of annal's own will do for a POST.
  const get = await fetch(`${app.url}/graphql?query=${encodeURIComponent("{ viewer { id } }")}`, {
    headers: { cookie },
  });
  t.notOk((await json(get)).errors);
  const referred = await post(
    { "content-type": "application/json", referer: `${app.url}/graphql` },
    JSON.stringify({ query: "{ viewer { id } }" }),
  );
  t.notOk((await json(referred)).errors);
});

t.test(
  "logout, revocation, expiry and a tampered cookie end a session: 401, never a 500",
  async (t) => {
    const signedIn = async () => {
      const browser = new Browserless();
      await signIn(browser, "prossi", DEMO_PASSWORD);
      return browser;
    };
    const code = async (cookie: string | undefined) => {
      const { body } = await viewerName(cookie);
      return { code: body.errors?.[0]?.extensions?.code, message: body.errors?.[0]?.message };
    };

    const out = await signedIn();
    const outCookie = out.cookie(host, "service_session");
    const logout = await out.request(`${app.url}/auth/logout`, {
      method: "POST",
      headers: { origin: app.url },
    });
    t.equal(logout.status, 200);
    t.notOk(out.cookie(host, "service_session"), "the cookie is cleared");
    t.match(await code(outCookie), { code: "UNAUTHENTICATED", message: /has ended/ });

    const revoked = (await signedIn()).cookie(host, "service_session");
    const listed = capturedOutput();
    t.equal(await main(["sessions", "list", "--config", app.config.source.path], listed.output), 0);
    t.match(listed.out.join("\n"), /directory:prossi {2}ldap/);
    const ended = await app.db.pool.query<{ id: string }>(
      "SELECT id FROM sessions WHERE ended_at IS NULL ORDER BY created_at DESC LIMIT 1",
    );
    const revoke = capturedOutput();
    t.equal(
      await main(
        ["sessions", "revoke", ended.rows[0]!.id, "--config", app.config.source.path],
        revoke.output,
      ),
      0,
    );
    t.match(await code(revoked), { code: "UNAUTHENTICATED", message: /has ended/ });
    const again = capturedOutput();
    t.equal(
      await main(
        ["sessions", "revoke", ended.rows[0]!.id, "--config", app.config.source.path],
        again.output,
      ),
      1,
    );
    t.match(again.err.join("\n"), /ANNAL_SESSION_NOT_FOUND/);

    const idle = await signedIn();
    await app.db.pool.query(
      "UPDATE sessions SET last_seen_at = now() - interval '1 day' WHERE ended_at IS NULL",
    );
    t.match(await code(idle.cookie(host, "service_session")), { message: /has expired/ });
    const recorded = await app.db.pool.query(
      "SELECT 1 FROM events WHERE type = 'SessionEnded' AND data->>'reason' = 'expired'",
    );
    t.ok(recorded.rowCount! > 0, "the expiry is recorded");

    const absolute = await signedIn();
    await app.db.pool.query("UPDATE sessions SET expires_at = now() WHERE ended_at IS NULL");
    t.match(await code(absolute.cookie(host, "service_session")), { message: /has expired/ });

    const tampered = (await signedIn()).cookie(host, "service_session")!;
    const flipped = `${tampered.slice(0, -1)}${tampered.endsWith("A") ? "B" : "A"}`;
    t.match(await code(flipped), { code: "UNAUTHENTICATED", message: /not valid/ });
    t.match(await code("short"), { code: "UNAUTHENTICATED" });
    const rest = await fetch(`${app.url}/api/entries/users?limit=1`, {
      headers: { cookie: `service_session=${flipped}` },
    });
    t.equal(rest.status, 401);
    t.equal((await json(rest)).code, "ANNAL_UNAUTHENTICATED");
  },
);

t.test("the REST channel takes the session cookie too", async (t) => {
  const browser = new Browserless();
  await signIn(browser, "owojcik", DEMO_PASSWORD);
  const answer = await fetch(`${app.url}/api/entries/users?limit=1`, {
    headers: { cookie: `service_session=${browser.cookie(host, "service_session")}` },
  });
  t.equal(answer.status, 200, "read granted to everyone in Engineering");
});

// Last: it uses up this address's attempts for the window.
t.test("attempts are limited per address too, whatever the login", async (t) => {
  const statuses: number[] = [];
  for (let i = 0; i < 45 && !statuses.includes(429); i++) {
    const answer = await new Browserless().request(`${app.url}/auth/login/oidc`);
    statuses.push(answer.status);
    if (answer.status === 429) {
      t.match(answer.headers.get("retry-after"), /^\d+$/);
      t.match(await answer.text(), /ANNAL_SIGN_IN_RATE_LIMITED/);
    }
  }
  t.ok(statuses.includes(429), "refused within [auth.rateLimit] perAddress");
  t.ok(
    statuses.slice(0, -1).every((status) => status === 302),
    "redirected to the provider before",
  );
  const form = await signIn(new Browserless(), "owojcik", DEMO_PASSWORD);
  t.equal(form.status, 429, "the form from the same address waits as well");
});
