import pino from "pino";
import t from "tap";
import { recentDemoMail, startDemoMailCatcher } from "../../src/demo/index.ts";
import { main } from "../../src/cli/main.ts";
import { freePort } from "../../src/ports.ts";
import { capturedOutput } from "../cli/support.ts";
import { call, startDemoRulesAnnal } from "../endpoints/support.ts";
import { eventually } from "../support/eventually.ts";

t.setTimeout(240_000);

// The demo's welcome endpoint with the demo's own mail catcher ([messaging.demo]), as
// ops/demo/annal.toml configures it: a send succeeds with no mail server of one's own, and the
// message is kept for `annal mail`.
const smtpPort = await freePort();
const app = await startDemoRulesAnnal(t, { smtpPort, catcher: true });
const operator = await app.token(["read", "operator"], "onboarding");

t.test("the demo's welcome mail reaches the demo's own catcher and is kept", async (t) => {
  const answer = await call(`${app.url}/api/welcome/prossi`, { token: operator, method: "POST" });
  t.equal(answer.status, 200, "not 502: something takes the mail");
  t.match(await answer.json(), { sent: true, messageId: /.+/ });
  const [mail] = await eventually(
    async () => {
      const kept = await recentDemoMail(app.db.pool, 10);
      return kept.length > 0 ? kept : undefined;
    },
    { what: "the kept welcome mail" },
  );
  t.equal(mail!.subject, "Welcome to Example");
  t.equal(mail!.from, "it@example.org");
  t.match(mail!.to, [/@example\.org$/]);
  t.match(mail!.text, /Hello Priya Rossi,/);

  // annal mail shows what was kept: a table, or JSON lines with the text.
  process.env.LDAP_PASSWORD = app.slapd.password;
  const table = capturedOutput();
  t.equal(await main(["mail", "--config", app.config.source.path], table.output), 0);
  t.match(table.out[0], /^received\s+to\s+subject$/);
  t.match(table.out[1], /@example\.org\s+Welcome to Example$/);
  const json = capturedOutput();
  t.equal(
    await main(["mail", "--json", "--limit", "1", "--config", app.config.source.path], json.output),
    0,
  );
  t.match(JSON.parse(json.out[0]!), { subject: "Welcome to Example", text: /Hello Priya Rossi/ });
});

t.test("a port already taken is not the demo's failure: it says so", async (t) => {
  const second = await startDemoMailCatcher({
    port: smtpPort,
    pool: app.db.pool,
    log: pino({ level: "silent" }),
  });
  t.ok("unavailable" in second);
  t.match((second as { unavailable: string }).unavailable, `127.0.0.1:${smtpPort} is taken`);
});
