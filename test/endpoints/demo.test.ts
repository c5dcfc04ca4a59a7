import iconv from "iconv-lite";
import { simpleParser, type ParsedMail } from "mailparser";
import { SMTPServer } from "smtp-server";
import t from "tap";
import { freePort } from "../../src/ports.ts";
import { eventually } from "../support/eventually.ts";
import { call, startDemoRulesAnnal } from "./support.ts";

t.setTimeout(240_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = async (response: Response): Promise<any> => response.json();

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

/** The demo's rules file and templates, as ops/demo/annal.toml names them. */
const app = await startDemoRulesAnnal(t, { smtpPort });
const reader = await app.token(["read"], "reports");
const operator = await app.token(["read", "operator"], "onboarding");

t.test("a department's people as CSV, in the encoding asked for", async (t) => {
  const answer = await call(
    `${app.url}/api/departments/engineering/people.csv?encoding=windows-1252`,
    { token: reader },
  );
  t.equal(answer.status, 200, answer.status === 200 ? "" : await answer.clone().text());
  t.equal(answer.headers.get("content-type"), "text/csv; charset=windows-1252");
  t.equal(
    answer.headers.get("content-disposition"),
    'attachment; filename="engineering-people.csv"',
  );
  const text = iconv.decode(Buffer.from(await answer.arrayBuffer()), "windows-1252");
  const lines = text.trim().split("\n");
  t.equal(lines[0], "uid,name,mail,title");
  t.ok(
    lines.some((line) => line.startsWith("prossi,Priya Rossi,")),
    "Priya Rossi is in Engineering",
  );
  t.ok(lines.length > 10);

  const utf16 = await call(`${app.url}/api/departments/engineering/people.csv?encoding=utf-16le`, {
    token: reader,
  });
  const bytes = Buffer.from(await utf16.arrayBuffer());
  t.same([...bytes.subarray(0, 2)], [0xff, 0xfe], "UTF-16 with its byte-order mark");
  t.equal(iconv.decode(bytes, "utf-16le").split("\n")[0], "uid,name,mail,title");

  const unknown = await call(`${app.url}/api/departments/engineering/people.csv?encoding=ebcdic`, {
    token: reader,
  });
  t.equal(unknown.status, 400);
  t.match(await json(unknown), {
    code: "ANNAL_ENDPOINT_INVALID_INPUT",
    issues: [{ path: "encoding" }],
  });
  t.equal(
    (await call(`${app.url}/api/departments/nowhere/people.csv`, { token: reader })).status,
    404,
  );
  t.equal(
    (
      await call(`${app.url}/api/departments/engineering/people.csv`, {
        token: await app.token([], "nobody"),
      })
    ).status,
    403,
  );
});

t.test("a welcome mail rendered from the demo's template", async (t) => {
  t.equal(
    (await call(`${app.url}/api/welcome/prossi`, { token: reader, method: "POST" })).status,
    403,
  );
  const answer = await call(`${app.url}/api/welcome/prossi`, { token: operator, method: "POST" });
  t.match(await json(answer), { sent: true, messageId: /.+/ });
  const mail = await eventually(() => received.find((m) => m.subject === "Welcome to Example"), {
    what: "the welcome mail",
  });
  t.match((mail.to as { text: string }).text, /@/);
  t.match(mail.html, "<p>Hello Priya Rossi,</p>");
  t.match(mail.html, "for the IT team");
  t.equal(
    (await call(`${app.url}/api/welcome/nobody-here`, { token: operator, method: "POST" })).status,
    404,
  );
});

t.test("the public status route", async (t) => {
  t.same(await json(await call(`${app.url}/api/status`)), { signedIn: false, name: null });
  t.same(await json(await call(`${app.url}/api/status`, { token: reader })), {
    signedIn: true,
    name: "reports",
  });
});

t.test("an access request goes to startWorkflow as the caller", async (t) => {
  const invalid = await call(`${app.url}/api/access-requests`, {
    token: reader,
    body: { group: "" },
  });
  t.equal(invalid.status, 400);
  // Without the access-request workflow deployed, startWorkflow's refusal comes through.
  const refused = await call(`${app.url}/api/access-requests`, {
    token: reader,
    body: { group: "cn=finance,ou=groups,dc=example,dc=org", reason: "quarterly close" },
  });
  const problem = await json(refused);
  t.match(problem, {
    code: "ANNAL_ENDPOINT_GRAPHQL_FAILED",
    errors: [{ extensions: { code: /^WF_|SERVICE_UNAVAILABLE/ } }],
  });
  t.comment(JSON.stringify(problem));
});

// With the demo's workflows deployed, the request starts and its owner answers it:
// test/demo/access-request.test.ts.
