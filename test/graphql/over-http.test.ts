import pino from "pino";
import t from "tap";
import { auditServer } from "graphql-http";
import { startAnnal } from "../../src/app/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { sampleLdif } from "../../src/demo/index.ts";
import { GATEWAY_TOML } from "../support/accounts.ts";
import { appConfig } from "../support/app-config.ts";
import { testDatabase } from "../support/postgres.ts";
import { startSlapd } from "../support/slapd.ts";

// GraphQL over HTTP as graphql-http's own audit reads it, against annal as `annal start` runs.
const slapd = await startSlapd({ seedLdif: sampleLdif() });
t.teardown(() => slapd.stop());
const db = await testDatabase(t);
const config = await appConfig(t, {
  db,
  slapd,
  captureInterval: "1h",
  // The audit asks for __type (its MUST on variables): GATEWAY_TOML has introspection on.
  extraToml: GATEWAY_TOML,
});
const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
t.teardown(() => annal.stop());
const { token } = await createToken(db.pool, await EventStore.open(db.pool), {
  name: "editor",
  access: ["read", "write"],
});
const url = `${annal.url}/graphql`;

/** `fetch` with the token: the audit's requests are a signed-in client's. */
const fetchFn = (input: string | URL | Request, init: RequestInit = {}) => {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${token}`);
  return fetch(input, { ...init, headers });
};

t.test("graphql-http's audit finds no MUST and no SHOULD failure", async (t) => {
  const results = await auditServer({ url, fetchFn });
  t.ok(results.length > 30, "the audit ran");
  const failures = [];
  for (const result of results) {
    if (result.status === "ok" || !/^(MUST|SHOULD) /.test(result.name)) continue;
    failures.push({ id: result.id, name: result.name, reason: result.reason });
  }
  t.same(failures, []);
});

/** A POST to /graphql with the token and `headers`. */
function post(body: string, headers: Record<string, string>) {
  return fetchFn(url, { method: "POST", headers, body });
}

t.test(
  "errors before execution: 4xx in application/graphql-response+json, 200 in JSON",
  async (t) => {
    const cases = [
      { query: "{", code: "GRAPHQL_PARSE_FAILED" },
      { query: "{ nope }", code: "GRAPHQL_VALIDATION_FAILED" },
      {
        query: "query($n: Int!) { people(first: $n) { nodes { uid } } }",
        variables: { n: "many" },
        code: "BAD_USER_INPUT",
      },
    ];
    for (const { query, variables, code } of cases) {
      const body = JSON.stringify({ query, variables });
      const spec = await post(body, {
        "content-type": "application/json",
        accept: "application/graphql-response+json",
      });
      t.equal(spec.status, 400, code);
      t.match(spec.headers.get("content-type"), /^application\/graphql-response\+json/);
      t.match(await spec.json(), { errors: [{ extensions: { code } }] });
      const legacy = await post(body, { "content-type": "application/json" });
      t.equal(legacy.status, 200, code);
      t.match(legacy.headers.get("content-type"), /^application\/json/);
      t.match(await legacy.json(), { errors: [{ extensions: { code } }] });
    }
    const ok = await post(JSON.stringify({ query: "{ __typename }" }), {
      "content-type": "application/json",
      accept: "application/graphql-response+json, application/json",
    });
    t.equal(ok.status, 200);
    t.match(ok.headers.get("content-type"), /^application\/graphql-response\+json/);
  },
);

t.test("without a token: 401 in application/graphql-response+json, 200 in JSON", async (t) => {
  const request = (accept: string) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept },
      body: JSON.stringify({ query: "{ __typename }" }),
    });
  const spec = await request("application/graphql-response+json");
  t.equal(spec.status, 401);
  t.match(await spec.json(), { errors: [{ extensions: { code: "UNAUTHENTICATED" } }] });
  const legacy = await request("application/json");
  t.equal(legacy.status, 200);
  t.match(await legacy.json(), { errors: [{ extensions: { code: "UNAUTHENTICATED" } }] });
});

t.test("a method other than GET and POST is 405 with Allow", async (t) => {
  for (const method of ["PUT", "PATCH", "DELETE"]) {
    const response = await fetchFn(url, { method });
    t.equal(response.status, 405, method);
    t.equal(response.headers.get("allow"), "GET, POST");
    t.match(await response.json(), { errors: [{ extensions: { code: "METHOD_NOT_ALLOWED" } }] });
  }
  const mutation = new URL(url);
  mutation.searchParams.set("query", "mutation { __typename }");
  const overGet = await fetchFn(mutation);
  t.equal(overGet.status, 405);
  t.equal(overGet.headers.get("allow"), "POST");
});

t.test("a document posted as application/graphql is 415 with a code of its own", async (t) => {
  const response = await post("{ __typename }", { "content-type": "application/graphql" });
  t.equal(response.status, 415);
  t.match(await response.json(), {
    errors: [
      {
        extensions: {
          code: "BAD_REQUEST",
          annalCode: "ANNAL_GRAPHQL_CONTENT_TYPE_UNSUPPORTED",
          hint: /application\/json/,
        },
      },
    ],
  });
});
