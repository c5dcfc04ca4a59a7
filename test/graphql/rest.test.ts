import { createServer, type IncomingMessage } from "node:http";
import { join } from "node:path";
import t from "tap";
import { startGateway } from "../support/graphql-gateway.ts";

// @rest against a real HTTP server started here, which echoes what it was sent.
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: unknown;
}
const seen: Seen[] = [];
const backend = createServer((request, response) => {
  let text = "";
  request.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
  request.on("end", () => {
    const record = {
      method: request.method!,
      url: request.url!,
      headers: request.headers,
      body: text === "" ? undefined : JSON.parse(text),
    };
    seen.push(record);
    const path = new URL(request.url!, "http://x").pathname;
    if (path === "/v1/broken") {
      response
        .writeHead(422, { "content-type": "application/json" })
        .end(JSON.stringify({ message: "employee 42 is archived" }));
    } else if (path === "/v1/plain-error") {
      response.writeHead(503).end("maintenance until noon");
    } else if (path.startsWith("/v1/users/")) {
      response.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          login: decodeURIComponent(path.slice("/v1/users/".length)),
          profile: { active: "TRUE", score: 1 },
          tags: ["a", "b"],
        }),
      );
    } else {
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(record));
    }
  });
});
await new Promise<void>((resolve) => backend.listen(0, "127.0.0.1", resolve));
t.teardown(() => new Promise((resolve) => backend.close(resolve)));
const base = `http://127.0.0.1:${(backend.address() as { port: number }).port}/v1`;

const dir = t.testdir({
  "rest.graphql": `
    type Echo { method: String! url: String! headers: JSON body: JSON }
    type User { login: String! active: Boolean! @alias(path: "profile.active") @ensureBoolean score: Int @alias(path: "profile.score") tags: [String!]! }
    extend type Query {
      echo(ids: [Int!], name: String): Echo @rest(backend: "hr", endpoint: "/echo", request: {
        method: "post",
        headers: { Authorization: "Bearer {{ $options.apiKey }}" },
        query: { who: "{{ $viewer.name }}", names: ["{{ $args.name }}", "fixed"] },
        body: { ids: "$args.ids", dn: "$viewer.dn", base: "$config.directory.base", tenant: "$options.tenant", label: "ids: {{ $args.ids }}" }
      })
      plainGet: Echo @rest(backend: "hr", endpoint: "/echo")
      user(login: String!): User @rest(backend: "hr", endpoint: "/users/{{ $args.login }}")
      broken: Echo @rest(backend: "hr", endpoint: "/broken")
      plainError: Echo @rest(backend: "hr", endpoint: "/plain-error")
      unreachable: Echo @rest(backend: "gone", endpoint: "/x")
      person(q: String!): Person @ldapFind(base: "ou=people,dc=example,dc=org", qAttributes: ["uid"])
    }
    type Person {
      uid: String @ldapField
      hr: Echo @rest(backend: "hr", endpoint: "/echo", request: { query: { uid: "{{ $parent.uid }}", mail: "$parent.mail" } })
    }
  `,
});

const gateway = await startGateway(t, {
  toml: `[graphql]\nschema = ["${join(dir, "*.graphql")}"]\n\n[[graphql.rest]]\nname = "hr"\nbase = "${base}"\nheaders = { "X-Default" = "from-config", Authorization = "overridden" }\nquery = { lang = "en" }\nbody = { source = "annal" }\napiKey = "\${HR_KEY:-k-123}"\ntenant = "acme"\n\n[[graphql.rest]]\nname = "gone"\nbase = "http://127.0.0.1:1"\ntimeoutMs = 2000\n`,
});

t.test("keywords, interpolation and defaults make the request", async (t) => {
  const { body } = await gateway.query(
    `{ echo(ids: [3, 1], name: "Zoë & co") { method url headers body } }`,
  );
  t.notOk(body.errors);
  const echo = (
    body.data as {
      echo: {
        method: string;
        url: string;
        headers: Record<string, string>;
        body: Record<string, unknown>;
      };
    }
  ).echo;
  t.equal(echo.method, "POST");
  const url = new URL(echo.url, "http://x");
  t.equal(url.pathname, "/v1/echo", "base + endpoint");
  t.same(
    url.searchParams.getAll("names"),
    ["Zoë & co", "fixed"],
    "a list sends the parameter repeatedly",
  );
  t.equal(url.searchParams.get("who"), "editor", "$viewer");
  t.equal(url.searchParams.get("lang"), "en", "the backend's default query");
  t.equal(echo.headers.authorization, "Bearer k-123", "$options, the directive's header wins");
  t.equal(echo.headers["x-default"], "from-config");
  t.same(
    echo.body,
    {
      source: "annal",
      ids: [3, 1],
      dn: "cn=editor,ou=service-accounts,dc=example,dc=org",
      base: "dc=example,dc=org",
      tenant: "acme",
      label: "ids: [3,1]",
    },
    "a bare keyword keeps its type; the default body is merged under",
  );
});

t.test("a GET sends no body; $parent reads the entry", async (t) => {
  const plain = await gateway.query(`{ plainGet { method body } }`);
  t.same(plain.body.data, { plainGet: { method: "GET", body: null } });
  const { body } = await gateway.query(`{ person(q: "owojcik") { uid hr { url } } }`);
  const url = new URL((body.data as { person: { hr: { url: string } } }).person.hr.url, "http://x");
  t.equal(url.searchParams.get("uid"), "owojcik");
  t.equal(url.searchParams.get("mail"), "owojcik@example.org");
});

t.test(
  "@alias and @ensureBoolean on the result; values stay inside their path segment",
  async (t) => {
    const { body } = await gateway.query(`{ user(login: "a/b?c") { login active score tags } }`);
    t.same(body.data, { user: { login: "a/b?c", active: true, score: 1, tags: ["a", "b"] } });
    t.match(seen.at(-1)?.url, /^\/v1\/users\/a%2Fb%3Fc\?/);
    const dots = await gateway.query(`{ user(login: "..") { login } }`);
    t.equal(dots.body.errors?.[0]?.extensions.code, "BAD_USER_INPUT");
  },
);

t.test(
  "a status other than 2xx raises REST_BACKEND_FAILED with the status and the backend's message",
  async (t) => {
    const json = await gateway.query(`{ broken { method } }`);
    t.equal(json.status, 200);
    t.match(json.body.errors?.[0], {
      message: 'the REST backend "hr" answered 422: employee 42 is archived',
      extensions: {
        code: "REST_BACKEND_FAILED",
        status: 422,
        backend: "hr",
        backendMessage: "employee 42 is archived",
      },
    });
    t.same(json.body.data, { broken: null });
    const text = await gateway.query(`{ plainError { method } }`);
    t.match(text.body.errors?.[0]?.extensions, {
      status: 503,
      backendMessage: "maintenance until noon",
    });
  },
);

t.test("a failed request raises REST_BACKEND_FAILED without a status", async (t) => {
  const { body } = await gateway.query(`{ unreachable { method } }`);
  t.match(body.errors?.[0]?.extensions, {
    code: "REST_BACKEND_FAILED",
    status: null,
    backend: "gone",
  });
});
