import t from "tap";
import { createToken } from "../../src/auth/index.ts";
import { main } from "../../src/cli/main.ts";
import { createDirectoryClient, eq } from "../../src/directory/index.ts";
import { capturedOutput } from "../cli/support.ts";
import { eventually } from "../support/eventually.ts";
import { DEMO_PASSWORD, PROSSI, startAccountsAnnal } from "../support/accounts.ts";
import { Browserless, form, signInWithOidc } from "../support/browserless.ts";

t.setTimeout(240_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = async (response: Response): Promise<any> => response.json();

async function ldapSignIn(url: string, login: string): Promise<string> {
  const browser = new Browserless();
  const answer = await browser.request(`${url}/auth/login/ldap`, {
    method: "POST",
    body: form({ login, password: DEMO_PASSWORD }),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: url },
  });
  if (answer.status !== 303) throw new Error(`sign-in answered ${answer.status}`);
  return `service_session=${browser.cookie(new URL(url).host, "service_session")}`;
}

const TITLE = (title: string) =>
  `mutation { updatePerson(dn: "${PROSSI}", input: [{ operation: replace, changes: { title: "${title}" } }]) { title } }`;

t.test("a person's mutation is made as that person: the directory's log names them", async (t) => {
  const app = await startAccountsAnnal(t);
  // Ready as a client would find it: the first start's import of the directory done, so the
  // change is captured as a change (not folded into the import's snapshot).
  await eventually(
    async () =>
      (await app.db.pool.query("SELECT 1 FROM capture_checkpoints WHERE source = 'accesslog'"))
        .rowCount,
    { what: "the first start's import" },
  );
  const cookie = await ldapSignIn(app.url, "prossi");
  const { body } = await app.graphql(TITLE("Chief Engineer"), { cookie });
  t.notOk(body.errors, JSON.stringify(body.errors));
  t.equal(body.data.updatePerson.title, "Chief Engineer");
  const root = createDirectoryClient({
    url: app.slapd.url,
    bindDN: app.slapd.bindDN,
    password: app.slapd.password,
  });
  t.teardown(() => root.close());
  const records = [];
  for await (const page of root.search("cn=accesslog", {
    filter: eq("reqType", "modify"),
    attributes: ["reqDN", "reqAuthzID"],
  })) {
    records.push(...page);
  }
  t.match(
    String(records.at(-1)?.attributes.reqAuthzID),
    new RegExp(`^(dn:)?${PROSSI}$`, "i"),
    "reqAuthzID",
  );
  // annal's own change history names the person too, once capture has recorded the change.
  const captured = await eventually(
    async () =>
      (
        await app.db.pool.query<{ dn: string; actor: string }>(
          `SELECT data->>'dn' AS dn, metadata->>'actor' AS actor FROM events
            WHERE type = 'EntryModified'`,
        )
      ).rows.find((row) => row.dn === PROSSI),
    { what: "the captured change" },
  );
  t.equal(captured.actor.toLowerCase(), PROSSI.toLowerCase(), "the change's actor");

  // Someone with read only cannot write.
  const reader = await ldapSignIn(app.url, "owojcik");
  const refused = await app.graphql(TITLE("Nope"), { cookie: reader });
  t.equal(refused.body.errors![0].extensions.code, "FORBIDDEN");
  t.match(refused.body.errors![0].extensions.hint, /\[authorization\.grants\]/);
});

t.test(
  "principals are asked for again after [auth] principalsRefresh: new groups, nested ones too",
  async (t) => {
    const app = await startAccountsAnnal(t);
    const cookie = await ldapSignIn(app.url, "owojcik");
    const principals = async () =>
      (await app.graphql(`{ viewer { authInfo { principals access } } }`, { cookie })).body.data
        .viewer.authInfo;
    t.notOk((await principals()).principals.includes("cn=night-shift,ou=groups,dc=example,dc=org"));
    const root = createDirectoryClient({
      url: app.slapd.url,
      bindDN: app.slapd.bindDN,
      password: app.slapd.password,
    });
    t.teardown(() => root.close());
    // A new group with her in it, inside the operators' role: operator through two levels.
    await root.add("cn=night-shift,ou=groups,dc=example,dc=org", {
      objectClass: "groupOfNames",
      cn: "night-shift",
      member: "uid=owojcik,ou=engineering,ou=people,dc=example,dc=org",
    });
    await root.modify("cn=annal-operators,ou=roles,dc=example,dc=org", [
      {
        operation: "add",
        attribute: "member",
        values: "cn=night-shift,ou=groups,dc=example,dc=org",
      },
    ]);
    t.notOk(
      (await principals()).principals.includes("cn=night-shift,ou=groups,dc=example,dc=org"),
      "fresh principals are kept",
    );
    await app.db.pool.query(
      "UPDATE account_principals SET refreshed_at = now() - interval '1 day'",
    );
    const refreshed = await principals();
    t.ok(refreshed.principals.includes("cn=night-shift,ou=groups,dc=example,dc=org"));
    t.ok(refreshed.access.includes("operator"), "the grant through the nested role applies");
    const events = await app.db.pool.query(
      "SELECT data->>'reason' AS reason FROM events WHERE type = 'PrincipalsRefreshed' ORDER BY position",
    );
    t.same(
      events.rows.map((r) => r.reason),
      ["sign-in", "refresh"],
      "the change is recorded",
    );
  },
);

t.test(
  "when the origin's provider cannot be reached and principals are stale, commands fail with WF_AUTHORIZATION_DENIED",
  async (t) => {
    const app = await startAccountsAnnal(t, { provider: "test" });
    const browser = new Browserless();
    const signed = await signInWithOidc(browser, app.url, "prossi", DEMO_PASSWORD);
    t.equal(signed.response.status, 200);
    const cookie = `service_session=${browser.cookie(new URL(app.url).host, "service_session")}`;
    // Fresh principals: the provider need not be asked.
    t.notOk((await app.graphql(TITLE("Lead"), { cookie })).body.errors);

    await app.stopProvider();
    await app.db.pool.query(
      "UPDATE account_principals SET refreshed_at = now() - interval '1 day'",
    );
    const viewer = await app.graphql(`{ viewer { authInfo { authority access } } }`, { cookie });
    t.equal(viewer.body.data.viewer.authInfo.authority, "unconfirmed");
    const read = await app.graphql(`{ person(q: "prossi") { uid } }`, { cookie });
    t.notOk(read.body.errors, "reads go on with the principals last confirmed");
    const command = await app.graphql(TITLE("Unconfirmed"), { cookie });
    t.equal(command.body.errors![0].extensions.code, "WF_AUTHORIZATION_DENIED");
    t.match(command.body.errors![0].message, /could not be confirmed/);
    const failed = await app.db.pool.query(
      "SELECT refresh_failed_at FROM account_principals WHERE refresh_failed_at IS NOT NULL",
    );
    t.equal(failed.rowCount, 1, "the failed refresh is noted");
  },
);

t.test(
  "more principals than [auth] maxPrincipals: the account's reads and commands fail with AUTHORIZATION_PRINCIPAL_LIMIT_EXCEEDED",
  async (t) => {
    const app = await startAccountsAnnal(t, { authToml: "maxPrincipals = 3" });
    const cookie = await ldapSignIn(app.url, "prossi"); // five groups, nested ones included
    const read = await app.graphql(`{ person(q: "prossi") { uid } }`, { cookie });
    t.equal(read.body.errors![0].extensions.code, "AUTHORIZATION_PRINCIPAL_LIMIT_EXCEEDED");
    const write = await app.graphql(TITLE("x"), { cookie });
    t.equal(write.body.errors![0].extensions.code, "AUTHORIZATION_PRINCIPAL_LIMIT_EXCEEDED");
    const rest = await fetch(`${app.url}/api/entries/users?limit=1`, { headers: { cookie } });
    t.equal(rest.status, 403);
    t.match(await json(rest), {
      code: "AUTHORIZATION_PRINCIPAL_LIMIT_EXCEEDED",
      count: 4,
      limit: 3,
    });
    const viewer = await app.graphql(`{ viewer { authInfo { principals access } } }`, { cookie });
    t.same(viewer.body.data.viewer.authInfo.access, [], "no access while over the limit");
    const recorded = await app.db.pool.query(
      "SELECT data FROM events WHERE type = 'PrincipalLimitExceeded'",
    );
    t.equal(recorded.rowCount, 1);
    t.match(recorded.rows[0].data, { count: 4, limit: 3 });
  },
);

t.test(
  "with no active Access Configuration people may do nothing (ANNAL_ACCESS_NOT_ACTIVE), service accounts keep their tokens' access, and annal verify says so",
  async (t) => {
    const app = await startAccountsAnnal(t, { activate: false });
    const cookie = await ldapSignIn(app.url, "prossi");
    const read = await app.graphql(`{ person(q: "prossi") { uid } }`, { cookie });
    t.equal(read.body.errors![0].extensions.code, "FORBIDDEN");
    t.match(read.body.errors![0].message, /no Access Configuration is active/);
    const rest = await fetch(`${app.url}/api/entries/users?limit=1`, { headers: { cookie } });
    t.equal(rest.status, 403);
    t.match(await json(rest), {
      code: "ANNAL_ACCESS_NOT_ACTIVE",
      hint: /\[authorization\.activate\]/,
    });
    const { token } = await createToken(app.db.pool, app.store, {
      name: "reader",
      access: ["read"],
    });
    // Served once the first import is in the projections (503 ANNAL_HISTORY_BUILDING before).
    const service = await eventually(async () => {
      const response = await fetch(`${app.url}/api/entries/users?limit=1`, {
        headers: { authorization: `Bearer ${token}` },
      });
      return response.status === 503 ? undefined : response;
    });
    t.equal(service.status, 200);

    process.env.LDAP_PASSWORD = app.slapd.password;
    const verify = capturedOutput();
    t.equal(await main(["verify", "--config", app.config.source.path], verify.output), 0);
    t.match(verify.out.join("\n"), /warn access: ANNAL_ACCESS_NOT_ACTIVE: no Access Configuration/);
    t.match(verify.out.join("\n"), /warn access: hint: .*\[authorization\.activate\]/);
  },
);

t.test(
  "a service account gets the Access Configuration's grants to service:<name> beside its tokens' access",
  async (t) => {
    const app = await startAccountsAnnal(t, {
      grantsToml: `[authorization.grants]
operator = ["service:ops-bot"]
auditor = ["service:ops-bot"]
`,
    });
    const { token, account } = await createToken(app.db.pool, app.store, {
      name: "ops-bot",
      access: ["read"],
    });
    const failedWork = await fetch(`${app.url}/api/failed-work`, {
      headers: { authorization: `Bearer ${token}` },
    });
    t.equal(failedWork.status, 200, "operator granted by the configuration");
    const viewer = await app.graphql(
      `{ viewer { authInfo { serviceAccount { name } principals access } } }`,
      { authorization: `Bearer ${token}` },
    );
    t.same(viewer.body.data.viewer.authInfo.access, ["auditor", "operator", "read"]);
    t.same(viewer.body.data.viewer.authInfo.principals, [
      `account:${account.id}`,
      "service:ops-bot",
    ]);

    process.env.LDAP_PASSWORD = app.slapd.password;
    const verify = capturedOutput();
    t.equal(await main(["verify", "--config", app.config.source.path], verify.output), 0);
    t.match(verify.out.join("\n"), /ok access: version 1 \(by the test\) grants auditor, operator/);
  },
);
