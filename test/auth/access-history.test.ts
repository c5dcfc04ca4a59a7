import t from "tap";
import { accessProjection, ACCESS_TABLES } from "../../projections/access/index.ts";
import { accessAt, activateAccessConfiguration, createToken } from "../../src/auth/index.ts";
import { main } from "../../src/cli/main.ts";
import { sampleEntries } from "../../src/demo/index.ts";
import { replayProjection, waitForProjection } from "../../src/projector/index.ts";
import { parseMoment } from "../../src/rest/time.ts";
import { capturedOutput } from "../cli/support.ts";
import { DEMO_PASSWORD, startAccountsAnnal } from "../support/accounts.ts";
import { Browserless, form } from "../support/browserless.ts";

t.setTimeout(180_000);

const app = await startAccountsAnnal(t);
const { pool } = app.db;
process.env.LDAP_PASSWORD = app.slapd.password;

// A person of Finance with read only: no manager, not in the identity team.
const FINANCE_READER = sampleEntries()
  .filter((e) => e.dn.includes("ou=finance,ou=people") && e.attributes.uid)
  .map((e) => String(e.attributes.uid![0]))[1]!;

// A person of Engineering outside the identity team and not its head: read, never more.
const ENGINEERING_READER = sampleEntries()
  .filter(
    (e) =>
      e.dn.includes("ou=engineering,ou=people") &&
      e.attributes.uid &&
      String(e.attributes.departmentNumber?.[0]) !== "ENG-2",
  )
  .map((e) => String(e.attributes.uid![0]))[1]!;

async function signIn(login: string): Promise<string> {
  const browser = new Browserless();
  const answer = await browser.request(`${app.url}/auth/login/ldap`, {
    method: "POST",
    body: form({ login, password: DEMO_PASSWORD }),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: app.url },
  });
  if (answer.status !== 303) throw new Error(`${login} could not sign in: ${answer.status}`);
  return `service_session=${browser.cookie(new URL(app.url).host, "service_session")}`;
}

const settled = async () => waitForProjection(pool, "access", await app.store.head(), 10_000);
const now = async () =>
  (await pool.query<{ now: Date }>("SELECT clock_timestamp() AS now")).rows[0]!.now;

// The story: v1 active, prossi and a reader sign in, a service account appears, then v2
// takes operator away from the operators' role and gives it to the reader's department.
const beforeAnyone = await now();
const prossi = await signIn("prossi");
const reader = await signIn(FINANCE_READER);
const { account: bot } = await createToken(pool, app.store, {
  name: "report-bot",
  access: ["read"],
});
await settled();
const underV1 = await now();
await activateAccessConfiguration(pool, app.store, {
  grants: {
    read: ["cn=finance,ou=groups,dc=example,dc=org", "cn=engineering,ou=groups,dc=example,dc=org"],
    operator: ["cn=finance,ou=groups,dc=example,dc=org"],
    auditor: ["cn=annal-auditors,ou=roles,dc=example,dc=org"],
  },
  activate: { version: 2, by: "jane.doe@example.org" },
});
await settled();
const underV2 = await now();

t.test("who could do what, at any moment: accessAt over the access projection", async (t) => {
  const before = await accessAt(pool, { at: beforeAnyone });
  t.match(before.configuration, { version: 1, activatedBy: "the test" });
  t.notOk(
    before.accounts.some((a) => a.name === "prossi"),
    "prossi had no account yet",
  );

  const v1 = await accessAt(pool, { at: underV1, account: "directory:prossi" });
  t.equal(v1.accounts.length, 1);
  const p1 = v1.accounts[0]!;
  t.same(p1.access, ["auditor", "export", "operator", "read", "write"]);
  t.ok(p1.principals.includes("cn=annal-operators,ou=roles,dc=example,dc=org"));
  t.ok(p1.since <= underV1);

  const v2 = await accessAt(pool, { at: underV2, account: "prossi" });
  t.match(v2.configuration, { version: 2, activatedBy: "jane.doe@example.org" });
  t.same(v2.accounts[0]!.access, ["auditor", "read"], "operator taken away by v2");
  t.ok(v2.accounts[0]!.since > underV1, "since v2's activation");

  const readerThen = await accessAt(pool, { at: underV1, account: FINANCE_READER });
  const readerNow = await accessAt(pool, { at: underV2, account: FINANCE_READER });
  t.same(readerThen.accounts[0]!.access, ["read"]);
  t.same(readerNow.accounts[0]!.access, ["operator", "read"]);

  const service = await accessAt(pool, { at: underV2, account: bot.id });
  t.match(service.accounts[0], { kind: "service", name: "report-bot", access: ["read"] });
  t.same(service.accounts[0]!.principals, [`account:${bot.id}`, "service:report-bot"]);
});

t.test("annal access show <account> --at", async (t) => {
  const output = capturedOutput();
  const code = await main(
    [
      "access",
      "show",
      "directory:prossi",
      "--at",
      underV1.toISOString(),
      "--config",
      app.config.source.path,
    ],
    output.output,
  );
  t.equal(code, 0, output.err.join("\n"));
  const text = output.out.join("\n");
  t.match(text, /Access Configuration: version 1, activated .* by the test/);
  t.match(text, /directory:prossi \(Priya Rossi\)/);
  t.match(text, /access: auditor, export, operator, read, write/);
  const bad = capturedOutput();
  t.equal(
    await main(["access", "show", "--at", "soon", "--config", app.config.source.path], bad.output),
    1,
  );
  t.match(bad.err.join("\n"), /ANNAL_USAGE: --at: "soon" is not a moment/);
  t.match(bad.err.join("\n"), /hint: write an ISO 8601 date or date-time .*now-1h/);
});

t.test("annal access show --at reads now-1m as the REST channel does", async (t) => {
  const before = Date.now();
  const output = capturedOutput();
  const args = ["access", "show", "--at", "now-1m", "--json", "--config", app.config.source.path];
  t.equal(await main(args, output.output), 0, output.err.join("\n"));
  const at = Date.parse((JSON.parse(output.out.join("\n")) as { at: string }).at);
  t.ok(at >= before - 60_000 && at <= Date.now() - 60_000, "a minute before the command ran");
});

t.test("GraphQL access(at:) answers auditors and operators, and refuses others", async (t) => {
  const query = `query($at: String, $account: String) { access(at: $at, account: $account) {
    at configuration { version activatedBy grants } accounts { name kind origin access principals since } } }`;
  const { body } = await app.graphql(
    query,
    { cookie: prossi },
    { at: underV1.toISOString(), account: "prossi" },
  );
  t.notOk(body.errors, JSON.stringify(body.errors));
  t.equal(body.data.access.configuration.version, 1);
  t.same(body.data.access.accounts[0].access, ["auditor", "export", "operator", "read", "write"]);
  // At v2 the Finance reader is an operator: the check is of the caller's access now.
  const operator = await app.graphql(query, { cookie: reader }, { at: underV1.toISOString() });
  t.notOk(operator.body.errors, "an operator may read it");
  const refused = await app.graphql(query, { cookie: await signIn(ENGINEERING_READER) });
  t.equal(refused.body.errors![0].extensions.code, "FORBIDDEN");
  t.match(refused.body.errors![0].message, /auditor/);
  const before = Date.now();
  const relative = await app.graphql(query, { cookie: prossi }, { at: "now-1m" });
  t.notOk(relative.body.errors, JSON.stringify(relative.body.errors));
  const at = Date.parse(relative.body.data.access.at);
  t.ok(at >= before - 60_000 && at <= Date.now() - 60_000, "now-1m, as REST and the CLI read it");
  const junk = await app.graphql(query, { cookie: prossi }, { at: "not a time" });
  t.equal(junk.body.errors![0].extensions.code, "BAD_USER_INPUT");
  t.match(junk.body.errors![0].message, /Invalid at/);
});

t.test("GraphQL's at and the CLI's --at read a text as REST's at does", async (t) => {
  const query = `query($at: String) { access(at: $at) { at } }`;
  const clock = { now: new Date(), timeZone: app.config.rest.timeZone };
  const texts = [
    underV1.toISOString(),
    "2026-11-20T10:00:00.5+02:00",
    "2026-11-20t10:00z",
    "2026-11-20 10:00",
    "2026-11-20",
    "P3D",
  ];
  for (const text of texts) {
    const rest = parseMoment("at", text, clock).getTime();
    const { body } = await app.graphql(query, { cookie: prossi }, { at: text });
    t.notOk(body.errors, `${text}: ${JSON.stringify(body.errors)}`);
    const cli = capturedOutput();
    const args = ["access", "show", "--at", text, "--json", "--config", app.config.source.path];
    t.equal(await main(args, cli.output), 0, cli.err.join("\n"));
    const cliAt = Date.parse((JSON.parse(cli.out.join("\n")) as { at: string }).at);
    const graphqlAt = Date.parse(body.data.access.at);
    if (text === "P3D") {
      // Three days before each one's own now: within the seconds this test runs.
      t.ok(Math.abs(graphqlAt - rest) < 60_000 && Math.abs(cliAt - rest) < 60_000, text);
    } else {
      t.equal(graphqlAt, rest, `GraphQL: ${text}`);
      t.equal(cliAt, rest, `CLI: ${text}`);
    }
  }
});

t.test("the access projection replays to the tables it was built incrementally into", async (t) => {
  const tables = async () => {
    const out: Record<string, unknown[]> = {};
    for (const [name, table] of Object.entries(ACCESS_TABLES)) {
      out[name] = (await pool.query(`SELECT * FROM ${table} ORDER BY 1, valid_from`)).rows;
    }
    return out;
  };
  await settled();
  const incremental = await tables();
  t.ok((incremental.accounts ?? []).length >= 3);
  await replayProjection({ pool, projection: accessProjection });
  t.same(await tables(), incremental);
});
