import { Writable } from "node:stream";
import t from "tap";
import { createPool } from "../../src/db/index.ts";
import { createLogger, logFormatFor, redactSecrets, redactUrl } from "../../src/logger.ts";
import { capturedLogger, testServer } from "../http/support.ts";

t.test("secret keys print [Redacted] at any depth of a logged object", async (t) => {
  const { log, lines, text } = capturedLogger();
  log.info(
    {
      password: "p-top",
      clientSecret: "cs-top",
      user: { name: "ada", userPassword: "up-1", profile: { secret: "s-3", token: "t-3" } },
      requests: [{ headers: { authorization: "Bearer a-1", cookie: "sid=c-1" } }],
      deep: { a: { b: { c: { d: { e: { f: { g: { password: "p-deep" } } } } } } } },
      req: { headers: { "webhook-signature": "v1,w-1", host: "example.org" } },
    },
    "signed in",
  );
  const [line] = lines;
  t.match(line, {
    msg: "signed in",
    password: "[Redacted]",
    clientSecret: "[Redacted]",
    user: {
      name: "ada",
      userPassword: "[Redacted]",
      profile: { secret: "[Redacted]", token: "[Redacted]" },
    },
    requests: [{ headers: { authorization: "[Redacted]", cookie: "[Redacted]" } }],
    deep: { a: { b: { c: { d: { e: { f: { g: { password: "[Redacted]" } } } } } } } },
    req: { headers: { "webhook-signature": "[Redacted]", host: "example.org" } },
  });
  t.notMatch(text.join("\n"), /p-top|cs-top|up-1|s-3|t-3|a-1|c-1|p-deep|w-1/);
});

t.test("an error's secret properties are redacted, its message and stack kept", async (t) => {
  const { log, lines } = capturedLogger();
  const error = Object.assign(new Error("bind failed"), { options: { password: "hunter2" } });
  log.error({ err: error }, "directory");
  t.match(lines[0], { err: { message: "bind failed", options: { password: "[Redacted]" } } });
  t.match(lines[0]?.err, { stack: /bind failed/ });
});

t.test("redaction copies only what it changes and leaves the logged object alone", async (t) => {
  const shared = { kept: true };
  const object = { user: { password: "x" }, shared };
  const redacted = redactSecrets(object);
  t.equal(object.user.password, "x");
  t.equal(redacted.shared, shared);
  t.equal(redacted.user.password, "[Redacted]");
  const clean = { a: { b: [1, 2] } };
  t.equal(redactSecrets(clean), clean);
});

t.test("request headers never reach the server's log", async (t) => {
  const pool = createPool("postgres://nobody@127.0.0.1:1/none", 1);
  t.teardown(() => pool.end());
  const { server, logged } = testServer(t, { pool });
  server.get("/whoami", async (request) => {
    request.log.info({ headers: request.headers }, "headers seen");
    return {};
  });
  await server.inject({
    method: "GET",
    url: "/whoami?access_token=sekrit-4&page=2",
    headers: {
      authorization: "Bearer sekrit-1",
      cookie: "sid=sekrit-2",
      "webhook-signature": "v1,sekrit-3",
    },
  });
  t.ok(logged.lines.some((line) => line.msg === "headers seen"));
  t.match(
    logged.lines.find((line) => line.route === "/whoami"),
    { method: "GET", url: "/whoami?access_token=[Redacted]&page=2" },
  );
  t.notMatch(logged.text.join("\n"), /sekrit/);
});

t.test("credential-like query parameters are redacted from URLs", async (t) => {
  t.equal(redactUrl("/api/users"), "/api/users");
  t.equal(
    redactUrl("/cb?code=1&client_secret=s&id_token=x&refresh%5Ftoken=y&q=token"),
    "/cb?code=[Redacted]&client_secret=[Redacted]&id_token=[Redacted]&refresh%5Ftoken=[Redacted]&q=token",
  );
  // An OpenID provider sends the browser back to /auth/callback with a one-time code and the
  // sign-in's state: both are credentials while they last.
  t.equal(
    redactUrl("/auth/callback?code=abc&state=xyz&iss=http%3A%2F%2Fidp"),
    "/auth/callback?code=[Redacted]&state=[Redacted]&iss=http%3A%2F%2Fidp",
  );
});

t.test("a token in any query parameter never reaches the log", async (t) => {
  const pool = createPool("postgres://nobody@127.0.0.1:1/none", 1);
  t.teardown(() => pool.end());
  const { server, logged } = testServer(t, { pool });
  server.get("/whoami", async () => ({}));
  const urls = [
    "/whoami?key=annal_sekrit1abc&page=2",
    "/whoami?annal_sekrit2abc",
    "/whoami?q=x%20annal%5Fsekrit3abc",
    "/whoami?api_key=sekrit4&apikey=sekrit5&auth=sekrit6&Token=sekrit7&access-token=sekrit8",
    "/whoami?bearer=sekrit9",
    "/nowhere?access_token=annal_sekrit10&x=annal_sekrit11",
  ];
  for (const url of urls) await server.inject({ method: "GET", url });
  const text = logged.text.join("\n");
  t.notMatch(text, /sekrit/, "no token value in any line");
  t.match(
    logged.lines.find((line) => line.route === "/whoami"),
    { url: "/whoami?key=[Redacted]&page=2" },
    "the rest of the URL is kept",
  );
  t.equal(
    redactUrl("/api/changes?first=10&after=abc&filter=sn%20eq%20x"),
    "/api/changes?first=10&after=abc&filter=sn%20eq%20x",
    "ordinary parameters are untouched",
  );
});

t.test("at a terminal the log is lines for a person, still redacted; elsewhere JSON", async (t) => {
  t.equal(logFormatFor({ isTTY: true }), "pretty");
  t.equal(logFormatFor({ isTTY: false }), "json");
  t.equal(logFormatFor({}), "json", "a pipe or a file");
  const chunks: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const log = createLogger("info", { pretty: true, destination });
  log.info({ user: { name: "ada", password: "p-1" } }, "signed in");
  const text = chunks.join("");
  t.match(text, /^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: signed in\n/);
  t.match(text, /"name": "ada"/);
  t.match(text, /"password": "\[Redacted\]"/);
  t.notMatch(text, /p-1|^\{/m);
});

t.test(
  "with a file the log goes there too, as redacted JSON, beside the pretty lines",
  async (t) => {
    const { mkdtemp, readFile } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const path = await import("node:path");
    const file = path.join(await mkdtemp(path.join(tmpdir(), "annal-log-")), "data", "annal.log");
    const chunks: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString());
        done();
      },
    });
    const log = createLogger("info", { pretty: true, destination, file });
    log.debug("below the level");
    log.info({ password: "p-2" }, "kept in the file");
    t.match(chunks.join(""), /INFO: kept in the file/);
    const lines = (await readFile(file, "utf8")).trimEnd().split("\n");
    t.equal(lines.length, 1, "only what the level lets through");
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    t.equal(line.msg, "kept in the file");
    t.equal(line.password, "[Redacted]");
    t.match(line.time, /^\d{4}-\d{2}-\d{2}T/);
  },
);
