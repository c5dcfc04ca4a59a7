import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import t from "tap";
import { lintOpenApi } from "../../src/cli/openapi-lint.ts";
import { DEMO_PASSWORD } from "../support/accounts.ts";
import { Browserless, form } from "../support/browserless.ts";
import { eventually } from "../support/eventually.ts";
import { OpenApiResponses, type SeenResponse } from "../support/openapi-responses.ts";
import { startRulesAnnal } from "../endpoints/support.ts";

t.setTimeout(300_000);

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Custom endpoints with validators of each kind, a public one, and one that answers 201. */
const RULES = `import { defineEndpoints } from "annal";

export const endpoints = defineEndpoints(({ app, v, vValidator, publicRoute }) => {
  app.get(
    "/things/:id",
    vValidator("param", v.object({ id: v.pipe(v.string(), v.regex(/^[0-9]+$/)) })),
    vValidator("query", v.object({ verbose: v.optional(v.picklist(["yes", "no"]), "no") })),
    (c) => c.json({ id: c.req.valid("param").id, verbose: c.req.valid("query").verbose }),
  );
  app.post(
    "/things",
    vValidator("json", v.object({ name: v.pipe(v.string(), v.minLength(1), v.maxLength(40)) })),
    (c) => c.json({ created: c.req.valid("json").name }, 201),
  );
  app.get("/status", publicRoute, (c) => c.json({ ok: true }));
});
`;

const annal = await startRulesAnnal(t, {
  files: { "rules/index.ts": RULES },
  // One export at a time, so that a second one meets the 429.
  extraToml: "[rest.export]\nmaxConcurrent = 1\nbatchSize = 100",
});
const reader = await annal.token(["read"], "reader");
const exporter = await annal.token(["read", "export"], "exporter");
const nobody = await annal.token([], "nobody");
const document = (await (await fetch(`${annal.url}/api.json`)).json()) as Json;
const responses = new OpenApiResponses(document);

const seen: SeenResponse[] = [];

/** A request over real HTTP; its response recorded for the check against the document. */
async function request(
  url: string,
  options: {
    token?: string;
    method?: string;
    body?: string;
    headers?: Record<string, string>;
  } = {},
): Promise<SeenResponse & { json(): Json }> {
  const response = await fetch(`${annal.url}${url}`, {
    method: options.method ?? "GET",
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  const one = {
    method: options.method ?? "GET",
    path: new URL(url, annal.url).pathname,
    status: response.status,
    contentType: response.headers.get("content-type") ?? undefined,
    body: await response.text(),
  };
  seen.push(one);
  return { ...one, json: () => JSON.parse(one.body) as Json };
}

/**
 * A request written on a socket as it is: for what Node's HTTP parser refuses before there
 * is a request (fetch cannot send a request line this long).
 */
async function rawRequest(path: string, head: string): Promise<SeenResponse> {
  const { hostname, port } = new URL(annal.url);
  const text = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("utf8")));
    socket.end(`GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n${head}\r\n`);
  });
  const [headText = "", body = ""] = text.split("\r\n\r\n");
  const [statusLine, ...lines] = headText.split("\r\n");
  const header = (name: string) =>
    lines
      .find((line) => line.toLowerCase().startsWith(`${name}:`))
      ?.slice(name.length + 1)
      .trim();
  const one = {
    method: "GET",
    path: path.split("?")[0]!,
    status: Number(statusLine?.split(" ")[1]),
    contentType: header("content-type"),
    body,
  };
  seen.push(one);
  return one;
}

async function ldapSession(login: string): Promise<string> {
  const browser = new Browserless();
  const answer = await browser.request(`${annal.url}/auth/login/ldap`, {
    method: "POST",
    body: form({ login, password: DEMO_PASSWORD }),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: annal.url },
  });
  if (answer.status !== 303) throw new Error(`sign-in answered ${answer.status}`);
  return `service_session=${browser.cookie(new URL(annal.url).host, "service_session")}`;
}

const q = encodeURIComponent;

t.test("the document a running annal serves passes redocly lint", async (t) => {
  const { ok, report } = await lintOpenApi(document);
  t.ok(ok, report.slice(-3000));
  t.ok(document.paths["/api/things/{id}"]?.get, "the custom routes are described");
});

t.test("the custom routes are described from their validators", async (t) => {
  const thing = document.paths["/api/things/{id}"].get;
  t.match(thing.parameters, [
    { name: "id", in: "path", required: true, schema: { type: "string", pattern: "^[0-9]+$" } },
    { name: "verbose", in: "query", required: false, schema: { enum: ["yes", "no"] } },
  ]);
  const post = document.paths["/api/things"].post;
  t.match(post.requestBody.content["application/json"].schema, {
    type: "object",
    required: ["name"],
    properties: { name: { type: "string", minLength: 1, maxLength: 40 } },
  });
  t.same(document.paths["/api/status"].get.security, [], "a public route needs no credentials");
  t.ok(post.responses["401"], "a route that is not public may answer 401");
});

t.test(
  "the export options and the credentials are described as the server takes them",
  async (t) => {
    const { components } = document;
    t.match(components.securitySchemes.sessionCookie, {
      type: "apiKey",
      in: "cookie",
      name: "service_session",
    });
    t.same(document.security, [{ bearerAuth: [] }, { sessionCookie: [] }]);
    t.match(components.schemas.ExportOptions_ldif.properties.wrap.anyOf, [
      { const: 0 },
      { type: "integer", minimum: 16, maximum: 10000 },
    ]);
    const options = new OpenApiResponses({
      ...document,
      paths: {
        "/x": {
          get: {
            responses: {
              "200": {
                description: "x",
                content: {
                  "application/json":
                    document.components.parameters.export.content["application/json"],
                },
              },
            },
          },
        },
      },
    });
    const check = (body: string) =>
      options.departures({
        method: "GET",
        path: "/x",
        status: 200,
        contentType: "application/json",
        body,
      });
    for (const accepted of [
      "{}",
      '{"nulls":"-"}',
      '{"nulls":"omit"}',
      '{"wrap":0}',
      '{"wrap":16}',
    ]) {
      t.same(check(accepted), [], `${accepted} is valid, as the server takes it`);
    }
    for (const refused of [
      '{"wrap":3}',
      '{"wrap":10001}',
      '{"delimiter":"\\""}',
      '{"colour":"red"}',
    ]) {
      t.not(check(refused).length, 0, `${refused} is refused, as the server refuses it`);
    }
  },
);

t.test("real responses, successes and every kind of error, are as the document says", async (t) => {
  const page = await eventually(async () => {
    const answer = await request("/api/entries/users?first=3&fields=uid,cn", { token: reader });
    return answer.status === 200 && answer.json().nodes.length === 3 ? answer.json() : undefined;
  });
  const [first] = page.nodes as Json[];
  const id = first!.id as string;

  // Successes.
  await request("/api/entries/users", { token: reader });
  await request(`/api/entries/users?first=2&after=${q(page.pageInfo.endCursor)}`, {
    token: reader,
  });
  await request("/api/entries/users?last=2", { token: reader });
  await request("/api/entries/users?include=count", { token: reader });
  await request("/api/entries/users?include=nodes,pageInfo,count&sort=-uid", { token: reader });
  await request(`/api/entries/users?filter=${q("(uid=prossi)")}&fields=cn,mail,uid`, {
    token: reader,
  });
  await request(`/api/entries/users?filter=${q('{"uid":"prossi"}')}`, { token: reader });
  await request(`/api/entries/users?filter=${q('uid eq "prossi"')}&fields=1.1`, { token: reader });
  await request(`/api/entries/users/${q(id)}`, { token: reader });
  await request(`/api/entries/users/${q(first!.entryUUID)}?fields=%2B`, { token: reader });
  await request(`/api/entries/users/${q(first!.dn)}?fields=uid`, { token: reader });
  await request(`/api/entries/users/${q(id)}?at=now`, { token: reader });
  const lookup = await fetch(`${annal.url}/api/entries/users/${q(id)}`, {
    headers: { authorization: `Bearer ${reader}` },
  });
  await lookup.arrayBuffer();
  const notModified = await request(`/api/entries/users/${q(id)}`, {
    token: reader,
    headers: { "if-none-match": lookup.headers.get("etag")! },
  });
  t.equal(notModified.status, 304);
  await request(`/api/entries/users/${q(id)}/changes`, { token: reader });
  await request(`/api/entries/users/${q(id)}/changes?during=${q("P30D/now")}`, { token: reader });
  await request(`/api/entries/users?at=now-1h&sort=-uid&include=nodes,pageInfo,count&first=2`, {
    token: reader,
  });
  await request(
    `/api/entries/users?fields=uid&during=${q("2000-01-01/..")}&include=nodes,pageInfo,count`,
    {
      token: reader,
    },
  );
  const memberships = await request(
    `/api/entries/users/${q(id)}/memberships?during=${q("P1Y/now")}`,
    {
      token: reader,
    },
  );
  t.equal(memberships.status, 200, memberships.body);
  await request(`/api/entries/users/${q(id)}/memberships`, { token: reader });
  await request("/api/changes", { token: reader });
  await request("/api/changes?include=nodes,patch,pageInfo,count&first=5", { token: reader });
  await request("/api/changes?since=now-1d&type=add&entryType=user", { token: reader });
  const exported = (name: string, options?: string) =>
    request(
      `/api/entries/users?fields=uid,cn,mail&filename=${name}${options === undefined ? "" : `&export=${q(options)}`}`,
      { token: exporter },
    );
  t.equal((await exported("people.csv", "{}")).status, 200, "{} is taken");
  t.equal((await exported("people.csv", '{"nulls":"-"}')).status, 200, '{"nulls":"-"} is taken');
  await exported("people.tsv");
  await exported("people.json", '{"nulls":"omit"}');
  await exported("people.ndjson");
  await exported("people.ldif", '{"wrap":0}');
  await exported("people.jsonld");
  await request(`/api/entries/users?fields=uid,cn,mail&filename=then.csv&at=${q("now-1m")}`, {
    token: exporter,
  });
  await request("/api.json");
  await request("/api", { headers: { accept: "application/yaml" } });
  await request("/api/entries/users?first=1", { headers: { cookie: await ldapSession("prossi") } });
  await request("/api/things/42?verbose=yes", { token: reader });
  await request("/api/things", {
    token: reader,
    method: "POST",
    body: JSON.stringify({ name: "a thing" }),
    headers: { "content-type": "application/json" },
  });
  await request("/api/status");

  // 400: malformed input of every kind.
  await request(`/api/entries/users?filter=${q("(uid=")}`, { token: reader });
  await request("/api/entries/users?first=0", { token: reader });
  await request("/api/entries/users?first=1&first=2", { token: reader });
  await request("/api/entries/users?sort=%2C%2C", { token: reader });
  await request(`/api/entries/users/${q(id)}?at=${q("not a moment")}`, { token: reader });
  await request("/api/changes?type=explode", { token: reader });
  await request(`/api/entries/users?during=${q("2026-03-02/2026-03-01")}`, { token: reader });
  await request(`/api/entries/users?during=${q("march")}`, { token: reader });
  await request(`/api/entries/users?during=${q("2026-03-01/..")}&at=now`, { token: reader });
  await request(`/api/entries/users/${q(id)}/memberships?during=x`, { token: reader });
  await request("/api/changes?after=not-a-cursor", { token: reader });
  await exported("people.csv", '{"colour":"red"}');
  await exported("people.ldif", '{"wrap":3}');
  await exported("people.exe");
  await request("/api/entries/users?filename=people.csv", { token: exporter });
  await request("/api/things/abc", { token: reader });
  await request("/api/things", {
    token: reader,
    method: "POST",
    body: JSON.stringify({ name: "" }),
    headers: { "content-type": "application/json" },
  });
  // 401, 403.
  await request("/api/entries/users");
  await request("/api/changes", { token: "not-a-token" });
  await request("/api/things/1");
  await request("/api/entries/users", { token: nobody });
  await exported("people.csv").then(() => undefined);
  await request("/api/entries/users?fields=uid&filename=people.csv", { token: reader });
  // 404.
  await request("/api/entries/nothings", { token: reader });
  await request("/api/entries/users/00000000-0000-4000-8000-000000000000", { token: reader });
  await request(`/api/entries/users/${q(id)}?at=2000-01-01T00:00:00Z`, { token: reader });
  await request(`/api/entries/users/${q(id)}/elsewhere`, { token: reader });
  // 406: the data routes as /api.
  const xml = await request("/api/entries/users", {
    token: reader,
    headers: { accept: "application/xml" },
  });
  t.equal(xml.status, 406, "Accept: application/xml on a data route is 406");
  t.match(xml.json(), { code: "ANNAL_NOT_ACCEPTABLE" });
  await request(`/api/entries/users/${q(id)}`, { token: reader, headers: { accept: "text/html" } });
  await request("/api/entries/users?fields=uid&filename=people.csv", {
    token: exporter,
    headers: { accept: "application/json" },
  });
  await request("/api", { headers: { accept: "image/png" } });
  // 414: over annal's limit, and over Node's header limit too; 431.
  const long = await request(`/api/entries/users?filter=${"x".repeat(20_000)}`, { token: reader });
  t.equal(long.status, 414);
  t.match(long.json(), { code: "ANNAL_URI_TOO_LONG" });
  t.match(long.contentType, /^application\/problem\+json/);
  const longer = await rawRequest(`/api/changes?actor=${"x".repeat(40_000)}`, "");
  t.equal(longer.status, 414, "past Node's header limit too");
  t.match(JSON.parse(longer.body), { code: "ANNAL_URI_TOO_LONG", status: 414 });
  t.match(longer.contentType, /^application\/problem\+json/);
  const headers = await rawRequest("/api/changes", `Cookie: c=${"x".repeat(40_000)}\r\n`);
  t.equal(headers.status, 431);
  t.match(JSON.parse(headers.body), { code: "ANNAL_HEADERS_TOO_LARGE" });

  // 429: an export streams to a client that stopped reading (20,000 entries of 1 kB, far
  // more than socket buffers hold), and a second export meets the limit.
  await annal.db.pool.query(
    `INSERT INTO projection_entries.entries
       (entry_uuid, type, dn, dn_norm, attributes, operational, created_at, modified_at, version, created_position, position, transaction_id)
     SELECT gen_random_uuid(), 'user', 'uid=bulk' || g || ',ou=people,dc=example,dc=org',
            'uid=bulk' || g || ',ou=people,dc=example,dc=org',
            jsonb_build_object('cn', jsonb_build_array(repeat('x', 1000))), '{}', now(), now(), 1, g, g, '1'::xid8
       FROM generate_series(1, 20000) AS g`,
  );
  const slow = httpRequest(new URL("/api/entries/users?fields=cn&filename=big.csv", annal.url), {
    headers: { authorization: `Bearer ${exporter}` },
  });
  t.teardown(() => slow.destroy());
  await new Promise<void>((resolve, reject) => {
    slow.on("error", reject);
    slow.on("response", (response) => {
      response.once("data", () => {
        response.pause();
        resolve();
      });
    });
    slow.end();
  });
  const busy = await exported("other.csv");
  t.equal(busy.status, 429, "a second export at once is 429");
  t.match(busy.json(), { code: "ANNAL_EXPORT_BUSY" });
  slow.destroy();

  const statuses = new Set(seen.map((one) => one.status));
  for (const status of [200, 201, 304, 400, 401, 403, 404, 406, 414, 429, 431]) {
    t.ok(statuses.has(status), `a ${status} is among the responses`);
  }
  t.ok(seen.length >= 40, `${seen.length} responses checked`);
  for (const one of seen) {
    t.same(responses.departures(one), [], `${one.method} ${one.path} ${one.status}`);
  }
});
