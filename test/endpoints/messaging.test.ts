import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";
import t from "tap";
import { freePort } from "../../src/ports.ts";
import { eventually } from "../support/eventually.ts";
import { call, startRulesAnnal } from "./support.ts";

t.setTimeout(240_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = async (response: Response): Promise<any> => response.json();

/** A real SMTP server on a free port: every message it takes, parsed. */
const received: ParsedMail[] = [];
const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ["STARTTLS"],
  logger: false,
  onData(stream, _session, done) {
    simpleParser(stream)
      .then((mail) => {
        received.push(mail);
        done();
      })
      .catch(done);
  },
});
const smtpPort = await freePort();
await new Promise<void>((resolve) => smtp.listen(smtpPort, "127.0.0.1", resolve));
t.teardown(() => new Promise<void>((resolve) => smtp.close(() => resolve())));

const RULES = `import { defineEndpoints } from "annal";
export const endpoints = defineEndpoints(({ app }) => {
  app.post("/reset", async (c) => {
    const { to, name } = await c.req.json();
    const html = await c.env.templating.render("@reset", { data: { name, link: "https://iam.example.org/reset?t=abc" } });
    return c.json(await c.env.messaging.send({ transport: "smtp", to, subject: "Reset your password", html, template: "@reset" }));
  });
  app.post("/welcome", async (c) => {
    const { to } = await c.req.json();
    return c.json(await c.env.messaging.send({ to, cc: ["hr@example.org"], subject: "Welcome", template: "@welcome", data: { name: "Zoë <Z>" } }));
  });
  app.post("/down", async (c) =>
    c.json(await c.env.messaging.send({ transport: "down", to: "x@example.org", subject: "Nobody listens", text: "hello" })),
  );
  app.post("/unknown", async (c) =>
    c.json(await c.env.messaging.send({ transport: "pigeon", to: "x@example.org", subject: "s", text: "t" })),
  );
  app.post("/no-recipient", async (c) => c.json(await c.env.messaging.send({ to: [], subject: "s", text: "t" })));
  app.get("/inline", async (c) =>
    c.html(await c.env.templating.render("<p>Hello {{name}}, {{{trusted}}}</p>{{> footer}}", { data: { name: "<b>Ada</b>", trusted: "<i>hi</i>" } })),
  );
  app.get("/missing", async (c) => c.text(await c.env.templating.render("@nope")));
  app.get("/broken", async (c) => c.text(await c.env.templating.render("{{#if}}")));
});
`;

const downPort = await freePort();
const app = await startRulesAnnal(t, {
  files: {
    "rules/index.ts": RULES,
    "templates/reset.hbs": `<p>Hello {{name}},</p><p><a href="{{link}}">Reset your password</a></p>{{> footer}}`,
    "templates/welcome.hbs": `<p>Welcome, {{name}}!</p>{{> footer}}`,
    "templates/footer.hbs": `<footer>Example IAM</footer>`,
  },
  extraToml: (dir) => `[messaging]
from = "Example IAM <iam@example.org>"
defaultTransport = "smtp"

[messaging.transports.smtp]
host = "127.0.0.1"
port = ${smtpPort}
timeout = "5s"

[messaging.transports.down]
host = "127.0.0.1"
port = ${downPort}
timeout = "2s"

[templating.partials]
reset = "${dir}/templates/reset.hbs"
welcome = "${dir}/templates/welcome.hbs"
footer = "${dir}/templates/footer.hbs"
`,
});
const token = await app.token(["read"], "helpdesk");

async function mailEvents() {
  const { rows } = await app.db.pool.query<{
    stream_id: string;
    data: Record<string, unknown>;
    metadata: Record<string, unknown>;
  }>(
    "SELECT stream_id, data, metadata FROM events WHERE type = 'MailSent' ORDER BY stream_version",
  );
  return rows;
}

t.test(
  "a mail rendered from a partial reaches the SMTP server and is recorded without its body",
  async (t) => {
    const answer = await call(`${app.url}/api/reset`, {
      token,
      body: { to: "prossi@example.org", name: "Priya" },
    });
    const result = await json(answer);
    t.match(result, { success: true, messageId: /^<.+>$/ });
    const mail = await eventually(() => received.find((m) => m.subject === "Reset your password"), {
      what: "the SMTP server has the reset mail",
    });
    t.match(mail.from?.value, [{ name: "Example IAM", address: "iam@example.org" }]);
    t.equal((mail.to as { text: string }).text, "prossi@example.org");
    // Handlebars escapes = in values too; a browser reads the link as it was given.
    t.match(
      mail.html,
      '<a href="https://iam.example.org/reset?t&#x3D;abc">Reset your password</a>',
    );
    t.match(mail.html, "<footer>Example IAM</footer>");
    t.equal(mail.messageId, result.messageId);

    const [event] = await mailEvents();
    t.match(event, {
      stream_id: /^mail-/,
      data: {
        transport: "smtp",
        to: ["prossi@example.org"],
        subject: "Reset your password",
        template: "@reset",
        outcome: "sent",
        messageId: result.messageId,
        account: { name: "helpdesk" },
      },
      metadata: { actor: "helpdesk", source: "endpoints" },
    });
    t.notMatch(JSON.stringify(event), /reset\?t=abc|Priya/, "the body is not in the log");
  },
);

t.test("send renders a template itself, HTML-escaped, with cc", async (t) => {
  t.match(
    await json(await call(`${app.url}/api/welcome`, { token, body: { to: "new@example.org" } })),
    { success: true },
  );
  const mail = await eventually(() => received.find((m) => m.subject === "Welcome"), {
    what: "the welcome mail",
  });
  t.match(mail.html, "<p>Welcome, Zoë &lt;Z&gt;!</p>");
  t.equal((mail.cc as { text: string }).text, "hr@example.org");
  t.match((await mailEvents()).at(-1), {
    data: { template: "@welcome", cc: ["hr@example.org"], outcome: "sent" },
  });
});

t.test("a server that does not answer is { success: false } and a failed MailSent", async (t) => {
  const result = await json(await call(`${app.url}/api/down`, { token, method: "POST" }));
  t.match(result, { success: false, error: { code: "ESOCKET", message: /ECONNREFUSED/ } });
  t.match((await mailEvents()).at(-1), {
    data: { transport: "down", outcome: "failed", messageId: null, error: { code: "ESOCKET" } },
  });
});

t.test("an unknown transport and a message without a recipient are coded errors", async (t) => {
  const unknown = await call(`${app.url}/api/unknown`, { token, method: "POST" });
  t.equal(unknown.status, 500);
  t.match(await json(unknown), { code: "ANNAL_MESSAGING_TRANSPORT_UNKNOWN" });
  const none = await call(`${app.url}/api/no-recipient`, { token, method: "POST" });
  t.match(await json(none), { code: "ANNAL_MESSAGING_INVALID" });
});

t.test(
  "templates: inline ones escape values and see the partials; a missing partial is a coded error",
  async (t) => {
    t.equal(
      await (await call(`${app.url}/api/inline`, { token })).text(),
      "<p>Hello &lt;b&gt;Ada&lt;/b&gt;, <i>hi</i></p><footer>Example IAM</footer>",
    );
    const missing = await call(`${app.url}/api/missing`, { token });
    t.equal(missing.status, 500);
    t.match(await json(missing), { code: "ANNAL_TEMPLATE_PARTIAL_NOT_FOUND" });
    t.match(await json(await call(`${app.url}/api/broken`, { token })), {
      code: "ANNAL_TEMPLATE_INVALID",
    });
  },
);
