import pino from "pino";
import { SMTPServer } from "smtp-server";
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

/** An SMTP server of someone else's on `port`: the messages it got. */
async function stranger(t: { teardown(fn: () => unknown): void }, port: number) {
  const got: string[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData(stream, session, done) {
      got.push(session.envelope.rcptTo.map((to) => to.address).join(","));
      stream.resume();
      stream.on("end", () => done());
    },
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return got;
}

t.test("a catcher whose port is taken listens on another and says so", async (t) => {
  const second = await startDemoMailCatcher({
    port: smtpPort,
    pool: app.db.pool,
    log: pino({ level: "silent" }),
  });
  t.teardown(() => second.stop());
  t.match(second.moved, { from: smtpPort, reason: /EADDRINUSE/ });
  t.not(second.port, smtpPort);
  t.equal(second.url, `smtp://127.0.0.1:${second.port}`);
});

t.test(
  "with the catcher's port taken by another server, the demo's mail still goes to the catcher, never to that server",
  async (t) => {
    const port = await freePort();
    const elsewhere = await stranger(t, port);
    const moved = await startDemoRulesAnnal(t, { smtpPort: port, catcher: true });
    const token = await moved.token(["read", "operator"], "onboarding");
    const answer = await call(`${moved.url}/api/welcome/prossi`, { token, method: "POST" });
    t.match(await answer.json(), { sent: true });
    const [mail] = await eventually(
      async () => {
        const kept = await recentDemoMail(moved.db.pool, 10);
        return kept.length > 0 ? kept : undefined;
      },
      { what: "the welcome mail kept by the moved catcher" },
    );
    t.equal(mail!.subject, "Welcome to Example");
    t.same(elsewhere, [], "the server on the catcher's port got nothing");
    const said = new RegExp(
      `^demo mail catcher on smtp://127\\.0\\.0\\.1:\\d+: 127\\.0\\.0\\.1:${port} is taken \\(.*\\), so transport "smtp" sends here instead; no mail goes to what listens on ${port}$`,
    );
    t.equal(
      moved.logged.lines.filter((line) => said.test(String(line.msg))).length,
      1,
      "one line says where the catcher went and why",
    );
  },
);
