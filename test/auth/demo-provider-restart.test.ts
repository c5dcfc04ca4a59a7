import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { DEMO_PASSWORD, PROSSI, startAccountsAnnal } from "../support/accounts.ts";
import { Browserless, signInWithOidc } from "../support/browserless.ts";
import { capturedLogger } from "../http/support.ts";

t.setTimeout(240_000);

const TITLE = (title: string) =>
  `mutation { updatePerson(dn: "${PROSSI}", input: [{ operation: replace, changes: { title: "${title}" } }]) { title } }`;

// The demo OpenID provider keeps its grants and refresh tokens in annal's PostgreSQL
// (demo_oidc): a person signed in with demo-sso before a restart keeps the right to act after
// it, once [auth] principalsRefresh has passed and annal asks the provider again.
t.test("a demo-sso sign-in survives a restart of annal", async (t) => {
  const app = await startAccountsAnnal(t);
  const browser = new Browserless();
  const signed = await signInWithOidc(browser, app.url, "prossi", DEMO_PASSWORD);
  t.equal(signed.response.status, 200);
  const cookie = `service_session=${browser.cookie(new URL(app.url).host, "service_session")}`;

  await app.annal.stop();
  const logged = capturedLogger();
  const again = await startAnnal({ config: app.config, log: logged.log });
  t.teardown(() => again.stop());
  t.equal(again.url, app.url);
  await app.db.pool.query("UPDATE account_principals SET refreshed_at = now() - interval '1 day'");

  const viewer = await app.graphql(`{ viewer { authInfo { authority } } }`, { cookie });
  t.equal(viewer.body.data.viewer.authInfo.authority, "confirmed", "refreshed after the restart");
  const command = await app.graphql(TITLE("Staff Engineer"), { cookie });
  t.notOk(command.body.errors, JSON.stringify(command.body.errors));
  t.notOk(
    logged.text.some((line) => line.includes("in-memory adapter")),
    "no warning about the in-memory adapter",
  );

  // A grant the provider no longer knows (revoked, expired): the refusal says what the
  // provider answered and to sign in again, and the log says it once, without a stack trace.
  await app.db.pool.query("DELETE FROM demo_oidc WHERE model <> '_secrets'");
  await app.db.pool.query("UPDATE account_principals SET refreshed_at = now() - interval '1 day'");
  for (let i = 0; i < 3; i++) {
    const refused = await app.graphql(TITLE(`Refused ${i}`), { cookie });
    const error = refused.body.errors![0];
    t.equal(error.extensions.code, "WF_AUTHORIZATION_DENIED");
    t.match(error.message, /the identity provider of origin "demo-sso" answered invalid_grant/);
    t.match(error.extensions.hint, /sign in again/);
    t.equal(error.extensions.signInAgain, true);
  }
  const failures = logged.lines.filter((line) =>
    String(line.msg).startsWith("principals of prossi could not be refreshed"),
  );
  t.equal(failures.length, 1, "logged once for the interval");
  t.notOk("err" in failures[0]!, "no error object, so no stack trace");
  t.notOk(
    logged.text.some((line) => line.includes('"stack"')),
    "no stack trace in any line",
  );
});
