import path from "node:path";
import iconv from "iconv-lite";
import t from "tap";
import { DEMO_PASSWORD } from "../support/accounts.ts";
import { Browserless, form } from "../support/browserless.ts";
import { call, startRulesAnnal } from "./support.ts";

t.setTimeout(240_000);

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const json = async (response: Response): Promise<any> => response.json();

/**
 * Every row of the spec's context and bindings tables, over real HTTP against annal as
 * `annal start` runs it, with the rules file test/endpoints/fixtures/bindings/index.ts.
 */
const app = await startRulesAnnal(t, {
  file: path.join(import.meta.dirname, "fixtures/bindings/index.ts"),
});
const reader = await app.token(["read"], "reader");
const operator = await app.token(["read", "write", "operator"], "ops");

async function ldapSignIn(login: string): Promise<string> {
  const browser = new Browserless();
  const answer = await browser.request(`${app.url}/auth/login/ldap`, {
    method: "POST",
    body: form({ login, password: DEMO_PASSWORD }),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: app.url },
  });
  if (answer.status !== 303) throw new Error(`sign-in answered ${answer.status}`);
  return `service_session=${browser.cookie(new URL(app.url).host, "service_session")}`;
}

t.test(
  "bindings: logger, log, config, global ids, viewer and token of a bearer token",
  async (t) => {
    const answer = await call(`${app.url}/api/bindings`, { token: reader });
    t.equal(answer.status, 200);
    const body = await json(answer);
    t.match(body, {
      requestId: /^[0-9a-f-]{36}$/,
      port: app.config.server.port,
      encoded: Buffer.from("Person:42").toString("base64"),
      decoded: { type: "Person", id: "42" },
      viewer: {
        anonymous: false,
        name: "reader",
        has: true,
        hasWrite: false,
        hasEvery: false,
        hasSome: true,
        hasRole: false,
        hasGroup: false,
      },
      token: {
        type: "bearer",
        accountName: "reader",
        kind: "service",
        sessionId: null,
        access: ["read"],
      },
      closure: "reader",
    });
    t.notMatch(JSON.stringify(body.token), reader, "the token's secret is not given");
    const lines = app.logged.lines.filter((line) => line.route === "bindings");
    t.match(lines, [
      { msg: "bindings asked", reqId: body.requestId },
      { msg: "the endpoints' logger", module: "endpoints" },
    ]);
    t.equal(
      lines[1]!.reqId,
      undefined,
      "the endpoints' logger is the process's, not the request's",
    );

    const bad = await call(`${app.url}/api/decode/not-an-id`, { token: reader });
    t.equal(bad.status, 400);
    t.match(await json(bad), { code: "ANNAL_ID_INVALID" });
  },
);

t.test("viewer: a person's session, with groups and roles through nested groups", async (t) => {
  const cookie = await ldapSignIn("prossi");
  const body = await json(await call(`${app.url}/api/bindings`, { headers: { cookie } }));
  t.match(body.viewer, {
    name: "prossi",
    has: true,
    hasWrite: true,
    hasEvery: true,
    hasRole: true,
    hasGroup: true,
  });
  t.match(body.token, { type: "session", kind: "person", origin: "directory", sessionId: /.+/ });
});

t.test(
  "query runs GraphQL as the caller, once per request; graphql gives the whole result",
  async (t) => {
    const query = await json(await call(`${app.url}/api/graphql/query`, { token: reader }));
    t.match(query, {
      data: {
        viewer: { id: /.+/, dn: /cn=reader/, authInfo: { serviceAccount: { name: "reader" } } },
      },
      cached: true,
    });

    const run = (source: string, variables?: object, operationName?: string) =>
      call(`${app.url}/api/graphql/run`, {
        token: reader,
        body: { source, variables, operationName },
      }).then(json);
    t.match(
      await run(
        "query A { a: viewer { id } } query B($dn: Boolean!) { viewer { dn @include(if: $dn) } }",
        { dn: true },
        "B",
      ),
      { data: { viewer: { dn: /cn=reader/ } } },
    );
    const invalid = await run("{ nope }");
    t.match(invalid, {
      errors: [{ message: /nope/, extensions: { code: "GRAPHQL_VALIDATION_FAILED" } }],
    });
    t.notOk(invalid.data);
    // The limits of POST /graphql: sixteen aliases are one too many.
    const aliases = Array.from({ length: 16 }, (_, i) => `a${i}: viewer { id }`).join(" ");
    t.match(await run(`{ ${aliases} }`), {
      errors: [{ extensions: { code: "GRAPHQL_ALIAS_LIMIT_EXCEEDED" } }],
    });

    // A refusal met by query keeps its status.
    const forbidden = await call(`${app.url}/api/graphql/forbidden`, { token: reader });
    t.equal(forbidden.status, 403);
    t.match(await json(forbidden), {
      code: "ANNAL_ENDPOINT_GRAPHQL_FAILED",
      errors: [{ extensions: { code: "FORBIDDEN" } }],
    });
    t.equal((await call(`${app.url}/api/graphql/forbidden`, { token: operator })).status, 200);
  },
);

t.test("v and vValidator: json, form and query, refused without echoing the input", async (t) => {
  const ok = await call(`${app.url}/api/validate/json`, {
    token: reader,
    body: { name: "Ada", age: 36 },
  });
  t.same(await json(ok), { name: "Ada", age: 36 });
  const bad = await call(`${app.url}/api/validate/json`, {
    token: reader,
    body: { name: "s3cr3t-x", age: "old" },
  });
  t.equal(bad.status, 400);
  t.equal(bad.headers.get("content-type"), "application/problem+json; charset=utf-8");
  const problem = await json(bad);
  t.match(problem, {
    code: "ANNAL_ENDPOINT_INVALID_INPUT",
    target: "json",
    issues: [{ path: "age", message: /number/ }],
  });
  t.notMatch(JSON.stringify(problem), /old|s3cr3t/);

  const form = await call(`${app.url}/api/validate/form`, {
    token: reader,
    body: new URLSearchParams({ uid: "prossi" }),
  });
  t.same(await json(form), { uid: "prossi" });
  const badForm = await call(`${app.url}/api/validate/form`, {
    token: reader,
    body: new URLSearchParams({ uid: "P!" }),
  });
  t.match(await json(badForm), {
    code: "ANNAL_ENDPOINT_INVALID_INPUT",
    target: "form",
    issues: [{ path: "uid" }],
  });

  t.same(await json(await call(`${app.url}/api/validate/query?page=3`, { token: reader })), {
    page: "3",
  });
  const badQuery = await call(`${app.url}/api/validate/query?page=three`, { token: reader });
  t.equal(badQuery.status, 400);
  t.match(await json(badQuery), { target: "query", issues: [{ path: "page" }] });
});

t.test("csv and iconv: a CSV in Latin-1, and one parsed", async (t) => {
  const answer = await call(`${app.url}/api/csv`, { token: reader });
  t.equal(answer.headers.get("content-type"), "text/csv; charset=iso-8859-1");
  const bytes = Buffer.from(await answer.arrayBuffer());
  t.ok(bytes.includes(0xf6), "ö is one Latin-1 byte");
  t.equal(iconv.decode(bytes, "latin1"), "name,city\nZoë Müller,Köln\n");
  const parsed = await call(`${app.url}/api/csv/parse`, {
    token: reader,
    body: "uid,city\nprossi,Köln\n",
    headers: { "content-type": "text/csv" },
  });
  t.same(await json(parsed), [{ uid: "prossi", city: "Köln" }]);
});

t.test("Hono's middleware from the context", async (t) => {
  const cors = await call(`${app.url}/api/mw/cors`, {
    token: reader,
    headers: { origin: "https://app.example.org" },
  });
  t.equal(cors.headers.get("access-control-allow-origin"), "https://app.example.org");
  t.equal(cors.headers.get("x-content-type-options"), "nosniff", "secureHeaders");
  t.match(
    await (await call(`${app.url}/api/mw/pretty?pretty`, { token: reader })).text(),
    '{\n  "pretty": true\n}',
  );
  t.equal((await call(`${app.url}/api/mw/timeout`, { token: reader })).status, 504);
  const limited = await call(`${app.url}/api/mw/limit`, {
    token: reader,
    body: "x".repeat(64),
    headers: { "content-type": "text/plain" },
  });
  t.equal(limited.status, 413);
  t.equal(
    await (
      await call(`${app.url}/api/mw/limit`, {
        token: reader,
        body: "small",
        headers: { "content-type": "text/plain" },
      })
    ).text(),
    "small",
  );
  const tagged = await call(`${app.url}/api/mw/etag`, { token: reader });
  const etag = tagged.headers.get("etag")!;
  t.ok(etag);
  t.equal(
    (await call(`${app.url}/api/mw/etag`, { token: reader, headers: { "if-none-match": etag } }))
      .status,
    304,
  );
  t.equal(
    (await call(`${app.url}/api/mw/deny-local`, { token: reader })).status,
    403,
    "ipRestriction denies",
  );
  t.equal(await (await call(`${app.url}/api/mw/allow-local`, { token: reader })).text(), "local");
  t.match(
    (await call(`${app.url}/api/mw/timing`, { token: reader })).headers.get("server-timing"),
    /directory;dur=/,
  );
  const first = await call(`${app.url}/api/mw/cookie`, { token: reader });
  t.match(first.headers.get("set-cookie"), /theme=dark; Path=\/api; HttpOnly/);
  t.same(await json(first), { seen: null });
  t.same(
    await json(
      await call(`${app.url}/api/mw/cookie`, { token: reader, headers: { cookie: "theme=dark" } }),
    ),
    { seen: "dark" },
  );
  t.same(
    [
      ...new Uint8Array(
        await (await call(`${app.url}/api/mw/stream`, { token: reader })).arrayBuffer(),
      ),
    ],
    [1, 2, 3],
  );
  t.equal(await (await call(`${app.url}/api/mw/text`, { token: reader })).text(), "one\ntwo\n");
  const sse = await call(`${app.url}/api/mw/sse`, { token: reader });
  t.match(sse.headers.get("content-type"), /text\/event-stream/);
  t.equal(await sse.text(), "event: greeting\ndata: hello\n\n");
});

t.test("app.route mounts a route tree", async (t) => {
  t.same(await json(await call(`${app.url}/api/reports/summary`, { token: reader })), {
    report: "summary",
    for: "reader",
  });
  const missing = await call(`${app.url}/api/reports/none`, { token: reader });
  t.equal(missing.status, 404);
  t.match(await json(missing), { code: "ANNAL_NOT_FOUND" });
});

t.test(
  "errors: HTTPException's status, message and cause; an uncaught error is a 500 without internals",
  async (t) => {
    const conflict = await call(`${app.url}/api/errors/http`, { token: reader });
    t.equal(conflict.status, 409);
    t.match(await json(conflict), {
      status: 409,
      code: "ANNAL_CONFLICT",
      detail: "the request is already pending",
      cause: { pending: "req-7" },
    });
    const resting = await call(`${app.url}/api/errors/http-5xx`, { token: reader });
    t.equal(resting.status, 503);
    t.match(await json(resting), {
      code: "ANNAL_ENDPOINT_HTTP_EXCEPTION",
      detail: "the mail server is resting",
    });
    // A 4xx annal has no code for keeps its status, with the code for such exceptions.
    const teapot = await call(`${app.url}/api/errors/http-418`, { token: reader });
    t.equal(teapot.status, 418);
    t.match(await json(teapot), {
      status: 418,
      code: "ANNAL_ENDPOINT_HTTP_EXCEPTION",
      detail: "this endpoint brews tea only",
    });
    const own = await call(`${app.url}/api/errors/http-res`, { token: reader });
    t.equal(own.status, 401);
    t.equal(await own.text(), "own answer");

    const failed = await call(`${app.url}/api/errors/uncaught`, { token: reader });
    t.equal(failed.status, 500);
    t.equal(failed.headers.get("content-type"), "application/problem+json; charset=utf-8");
    const problem = await json(failed);
    t.match(problem, {
      type: "urn:annal:problem:ANNAL_INTERNAL",
      status: 500,
      code: "ANNAL_INTERNAL",
      requestId: /.+/,
    });
    t.match(problem.detail, problem.requestId);
    t.notMatch(JSON.stringify(problem), /secret_table/);
    const logged = app.logged.lines.find((line) => line.msg === "endpoint failed");
    t.match(logged, {
      reqId: problem.requestId,
      requestId: problem.requestId,
      err: { message: /secret_table/ },
    });
  },
);

t.test(
  "access: refused without credentials, a 403 from the endpoint's own check, public routes",
  async (t) => {
    const none = await call(`${app.url}/api/bindings`);
    t.equal(none.status, 401);
    t.match(await json(none), { code: "ANNAL_UNAUTHENTICATED" });
    t.equal((await call(`${app.url}/api/bindings`, { token: "not-a-token" })).status, 401);
    const refused = await call(`${app.url}/api/admin`, { token: reader });
    t.equal(refused.status, 403);
    t.match(await json(refused), { code: "ANNAL_FORBIDDEN", detail: "operators only" });
    t.same(await json(await call(`${app.url}/api/admin`, { token: operator })), { admin: true });

    t.same(await json(await call(`${app.url}/api/status`)), { anonymous: true, token: null });
    t.match(await json(await call(`${app.url}/api/status`, { token: reader })), {
      anonymous: false,
      token: { accountName: "reader" },
    });
    t.same(await json(await call(`${app.url}/api/status`, { token: "expired" })), {
      anonymous: true,
      token: null,
    });
    // A public subtree; GraphQL still needs a caller.
    const anonymous = await call(`${app.url}/api/open/who`);
    t.equal(anonymous.status, 401);
    t.match(await json(anonymous), { code: "ANNAL_ENDPOINT_GRAPHQL_FAILED" });
    t.match(await json(await call(`${app.url}/api/open/who`, { token: reader })), {
      viewer: { id: /.+/ },
    });
    t.equal(
      (await call(`${app.url}/api/no-such-route`)).status,
      401,
      "unknown paths are not told apart without credentials",
    );
  },
);

t.test("annal's own paths under /api still answer beside the rules' routes", async (t) => {
  t.equal((await call(`${app.url}/api.json`)).status, 200);
  const entries = await call(`${app.url}/api/entries/users?limit=1`, { token: reader });
  t.equal(entries.status, 200);
});

t.test("mail and templates are coded errors without [messaging] and [templating]", async (t) => {
  const mail = await call(`${app.url}/api/unconfigured/mail`, { token: reader, method: "POST" });
  t.equal(mail.status, 500);
  t.match(await json(mail), { code: "ANNAL_MESSAGING_NOT_CONFIGURED" });
  const render = await call(`${app.url}/api/unconfigured/render`, { token: reader });
  t.equal(render.status, 500);
  t.match(await json(render), { code: "ANNAL_TEMPLATING_NOT_CONFIGURED" });
});
