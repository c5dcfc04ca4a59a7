import { Lexer, Source, TokenKind } from "graphql";
import t from "tap";
import { startGateway, type GatewayHarness } from "../support/graphql-gateway.ts";

// The endpoint: status codes, error codes, limits at and past each bound, introspection.
const gateway = await startGateway(t);

function codes(body: Awaited<ReturnType<GatewayHarness["query"]>>["body"]): unknown[] {
  return (body.errors ?? []).map((error) => error.extensions.code);
}

t.test("POST and GET answer 200 with data", async (t) => {
  const post = await gateway.query(`{ viewer { authInfo { serviceAccount { name } } } }`);
  t.equal(post.status, 200);
  t.same(post.body, { data: { viewer: { authInfo: { serviceAccount: { name: "editor" } } } } });
  const get = await gateway.query(
    `query($q: String) { people(q: $q) { nodes { uid } } }`,
    { q: "owojcik" },
    { method: "GET" },
  );
  t.equal(get.status, 200);
  t.same(get.body.data, { people: { nodes: [{ uid: "owojcik" }] } });
});

t.test(
  "the viewer is the account behind the token, with the DN its writes are made as",
  async (t) => {
    const { body } = await gateway.query(
      `{ viewer { id dn authInfo { dn name access serviceAccount { name access } } } }`,
      undefined,
      {
        token: gateway.tokens.read,
      },
    );
    const viewer = (body.data as { viewer: Record<string, any> }).viewer; // eslint-disable-line @typescript-eslint/no-explicit-any
    t.equal(viewer.dn, "cn=reader,ou=service-accounts,dc=example,dc=org");
    t.match(Buffer.from(viewer.id, "base64").toString(), /^ServiceAccount:[0-9a-f-]{36}$/);
    t.same(viewer.authInfo.serviceAccount, { name: "reader", access: ["read"] });
  },
);

t.test("no token, or a bad one: UNAUTHENTICATED", async (t) => {
  for (const token of [null, "annal_not-a-real-token"]) {
    const { status, body } = await gateway.query(`{ viewer { id } }`, undefined, { token });
    t.equal(status, 200);
    t.same(codes(body), ["UNAUTHENTICATED"]);
    t.equal(body.data, undefined);
  }
});

t.test("an account without the access function: FORBIDDEN", async (t) => {
  const read = await gateway.query(`{ people { nodes { uid } } }`, undefined, {
    token: gateway.tokens.write,
  });
  t.same(codes(read.body), ["FORBIDDEN"]);
  t.same(read.body.data, { people: null });
  const write = await gateway.query(
    `mutation { deletePerson(dn: "uid=x,ou=people,dc=example,dc=org") }`,
    undefined,
    {
      token: gateway.tokens.read,
    },
  );
  t.same(codes(write.body), ["FORBIDDEN"]);
  t.match(write.body.errors?.[0]?.extensions, { annalCode: "ANNAL_FORBIDDEN" });
});

t.test("a body that is not JSON answers 400; so does a body that is not a request", async (t) => {
  const auth = {
    authorization: `Bearer ${gateway.tokens.both}`,
    "content-type": "application/json",
  };
  const broken = await gateway.server.inject({
    method: "POST",
    url: "/graphql",
    headers: auth,
    payload: '{"query": "{ viewer { id } }"',
  });
  t.equal(broken.statusCode, 400);
  t.match(broken.json(), {
    errors: [
      { message: "the request body is not valid JSON", extensions: { code: "BAD_REQUEST" } },
    ],
  });
  const array = await gateway.server.inject({
    method: "POST",
    url: "/graphql",
    headers: auth,
    payload: "[1]",
  });
  t.equal(array.statusCode, 400);
  const noQuery = await gateway.server.inject({
    method: "POST",
    url: "/graphql",
    headers: auth,
    payload: "{}",
  });
  t.equal(noQuery.statusCode, 400);
  t.same(noQuery.json().errors[0].extensions, { code: "BAD_REQUEST" });
});

t.test("a mutation over GET is refused with 405", async (t) => {
  const { status, body } = await gateway.query(
    `mutation { deletePerson(dn: "uid=x,dc=example,dc=org") }`,
    undefined,
    { method: "GET" },
  );
  t.equal(status, 405);
  t.same(codes(body), ["METHOD_NOT_ALLOWED"]);
});

t.test(
  "syntax errors are GRAPHQL_PARSE_FAILED, schema mismatches GRAPHQL_VALIDATION_FAILED, both 200",
  async (t) => {
    const syntax = await gateway.query(`{ viewer { id `);
    t.equal(syntax.status, 200);
    t.same(codes(syntax.body), ["GRAPHQL_PARSE_FAILED"]);
    const unknown = await gateway.query(`{ viewer { nope } }`);
    t.equal(unknown.status, 200);
    t.same(codes(unknown.body), ["GRAPHQL_VALIDATION_FAILED"]);
  },
);

t.test("introspection is refused unless [graphql] introspection = true", async (t) => {
  const allowed = await gateway.query(`{ __schema { queryType { name } } }`);
  t.same(
    allowed.body.data,
    { __schema: { queryType: { name: "Query" } } },
    "the demo configuration allows it",
  );
  const closed = await startGateway(t, {
    slapd: gateway.slapd,
    toml: `[graphql]\nintrospection = false\n`,
  });
  const refused = await closed.query(`{ __schema { queryType { name } } }`);
  t.equal(refused.status, 200);
  t.ok(refused.body.errors?.length);
  t.ok(codes(refused.body).every((code) => code === "GRAPHQL_VALIDATION_FAILED"));
  const typename = await closed.query(`{ __typename }`);
  t.same(typename.body.data, { __typename: "Query" }, "__typename is not introspection");
});

function countTokens(document: string): number {
  const lexer = new Lexer(new Source(document));
  let count = 0;
  while (lexer.advance().kind !== TokenKind.EOF) count++;
  return count;
}

/** A document of exactly `n` tokens: a list argument padded with strings. */
function tokens(n: number): string {
  const document = (k: number) =>
    `{ people(first: 1, by: { cities: [${' "x"'.repeat(k)} ] }) { totalCount } }`;
  const document0 = document(0);
  const padded = document(n - countTokens(document0));
  if (countTokens(padded) !== n) throw new Error("miscounted");
  return padded;
}

t.test("at most 1,000 tokens", async (t) => {
  const at = await gateway.query(tokens(1000));
  t.equal(at.status, 200);
  t.notOk(at.body.errors, "1,000 tokens pass");
  const past = await gateway.query(tokens(1001));
  t.equal(past.status, 200);
  t.same(codes(past.body), ["GRAPHQL_PARSE_FAILED"]);
  t.match(past.body.errors?.[0]?.message, /more tha[nt] 1000 tokens/);
});

function nested(depth: number): string {
  // Query.person(depth 1) → manager → manager …: `depth` levels of fields, then uid.
  let selection = "uid";
  for (let i = 2; i < depth; i++) selection = `manager { ${selection} }`;
  return `{ person(q: "owojcik") { ${selection} } }`;
}

t.test("nesting at most 20 levels deep", async (t) => {
  const at = await gateway.query(nested(20));
  t.equal(at.status, 200);
  t.notOk(at.body.errors, "20 levels pass");
  const past = await gateway.query(nested(21));
  t.equal(past.status, 200);
  t.same(codes(past.body), ["GRAPHQL_DEPTH_LIMIT_EXCEEDED"]);
  t.match(past.body.errors?.[0]?.message, /depth limit of 20/);
});

function aliases(n: number): string {
  return `{ ${Array.from({ length: n }, (_, i) => `a${i}: viewer { id }`).join(" ")} }`;
}

t.test("at most 15 aliases", async (t) => {
  const at = await gateway.query(aliases(15));
  t.notOk(at.body.errors, "15 aliases pass");
  const past = await gateway.query(aliases(16));
  t.equal(past.status, 200);
  t.same(codes(past.body), ["GRAPHQL_ALIAS_LIMIT_EXCEEDED"]);
  t.match(past.body.errors?.[0]?.message, /Aliases limit of 15 exceeded, found 16/);
});

function directives(n: number): string {
  return `{ viewer { ${"id @include(if: true) ".repeat(n)}} }`;
}

t.test("at most 50 directives", async (t) => {
  const at = await gateway.query(directives(50));
  t.notOk(at.body.errors, "50 directives pass");
  const past = await gateway.query(directives(51));
  t.equal(past.status, 200);
  t.same(codes(past.body), ["GRAPHQL_DIRECTIVE_LIMIT_EXCEEDED"]);
});

t.test("first is 1 to 100 and cursors are opaque and checked", async (t) => {
  for (const first of [0, 101, -1]) {
    const { status, body } = await gateway.query(
      `query($f: Int) { people(first: $f) { nodes { uid } } }`,
      { f: first },
    );
    t.equal(status, 200);
    t.same(codes(body), ["BAD_USER_INPUT"]);
    t.equal(body.errors?.[0]?.message, "first must be between 1 and 100");
  }
  for (const first of [1, 100]) {
    const { body } = await gateway.query(`query($f: Int) { people(first: $f) { nodes { uid } } }`, {
      f: first,
    });
    t.equal((body.data as { people: { nodes: unknown[] } }).people.nodes.length, first);
  }
  const page = await gateway.query(
    `{ people(first: 1) { pageInfo { endCursor } } groups(first: 1) { pageInfo { endCursor } } }`,
  );
  const data = page.body.data as Record<string, { pageInfo: { endCursor: string } }>;
  const cursor = data.people!.pageInfo.endCursor;
  t.notMatch(Buffer.from(cursor, "base64url").toString(), /^\d+$/, "not a bare offset");
  for (const after of ["bm9wZQ", "", "x".repeat(300), data.groups!.pageInfo.endCursor]) {
    const { body } = await gateway.query(
      `query($a: String) { people(after: $a) { nodes { uid } } }`,
      { a: after },
    );
    t.same(codes(body), ["BAD_USER_INPUT"]);
    t.equal(body.errors?.[0]?.message, "Invalid pagination cursor");
  }
  const paging = await gateway.query(
    `{ group(q: "managers") { members(paging: { first: 500 }) { nodes { uid } } } }`,
  );
  t.equal(
    paging.body.errors?.[0]?.message,
    "first must be between 1 and 100",
    "paging: LDAPPaging too",
  );
});

t.test("malformed arguments: Invalid <field>, Invalid <name> filter, an invalid DN", async (t) => {
  const id = await gateway.query(`{ personById(id: "not an id") { uid } }`);
  t.same(codes(id.body), ["BAD_USER_INPUT"]);
  t.equal(id.body.errors?.[0]?.message, "Invalid id");
  const uuid = await gateway.query(`{ personByEntryUUID(entryUUID: "x") { uid } }`);
  t.equal(uuid.body.errors?.[0]?.message, "Invalid entryUUID");
  const filter = await gateway.query(`{ people(where: { uid: {} }) { nodes { uid } } }`);
  t.same(codes(filter.body), ["BAD_USER_INPUT"]);
  t.equal(filter.body.errors?.[0]?.message, "Invalid uid filter");
  const inList = await gateway.query(`{ people(where: { uid: { in: [] } }) { nodes { uid } } }`);
  t.equal(inList.body.errors?.[0]?.message, "Invalid uid filter");
  const dn = await gateway.query(`query($dn: DN!) { personByDn(dn: $dn) { uid } }`, {
    dn: "not a dn",
  });
  t.equal(dn.status, 200);
  t.same(codes(dn.body), ["BAD_USER_INPUT"]);
  const literal = await gateway.query(`{ personByDn(dn: "=,=") { uid } }`);
  t.same(
    codes(literal.body),
    ["GRAPHQL_VALIDATION_FAILED"],
    "a literal is checked with the document",
  );
});

t.test("directory errors keep their own code beside the category", async (t) => {
  // An entry that is there already: the directory's own refusal, under CONFLICT.
  const { body } = await gateway.query(
    `mutation($input: PersonInput!) { createPerson(rdn: "ou=engineering", input: $input) { dn } }`,
    { input: { cn: "Priya Rossi", sn: "Rossi" } },
  );
  t.same(codes(body), ["CONFLICT"]);
  t.match(body.errors?.[0]?.extensions, { annalCode: "ANNAL_LDAP_ALREADY_EXISTS" });
  t.same(body.data, { createPerson: null });
});

t.test(
  "without a directory, directory fields fail with SERVICE_UNAVAILABLE and viewer still works",
  async (t) => {
    const alone = await startGateway(t, { directory: false });
    const { status, body } = await alone.query(`{ viewer { dn } people { nodes { uid } } }`);
    t.equal(status, 200);
    t.same(codes(body), ["SERVICE_UNAVAILABLE"]);
    t.match(body.errors?.[0]?.extensions, { annalCode: "ANNAL_DIRECTORY_NOT_CONFIGURED" });
    t.same(body.data, { viewer: { dn: "cn=editor,ou=service-accounts" }, people: null });
  },
);

t.test("an unexpected failure is INTERNAL_SERVER_ERROR naming only the request id", async (t) => {
  // An entry no type of the union fits: the schema's configuration is at fault, not the caller.
  const { body } = await gateway.query(
    `{ entry(dn: "uid=svc-annal,ou=services,dc=example,dc=org") { __typename } }`,
  );
  t.same(codes(body), ["INTERNAL_SERVER_ERROR"]);
  t.match(body.errors?.[0]?.message, /cannot tell which of Person, Group, Department/);
});

/** `{ _not_: { _not_: … { uid: { eq: "owojcik" } } } }`, `depth` levels deep. */
function nestedWhere(depth: number): unknown {
  let where: unknown = { uid: { eq: "owojcik" } };
  for (let i = 0; i < depth; i++) where = { _not_: where };
  return where;
}

t.test("a where nested past 32 levels is BAD_USER_INPUT, through variables too", async (t) => {
  const query = `query($w: PersonWhere) { people(where: $w) { nodes { uid } } }`;
  const within = await gateway.query(query, { w: nestedWhere(30) });
  t.same(codes(within.body), [], "30 levels are served");
  for (const depth of [40, 5_000]) {
    const { status, body } = await gateway.query(query, { w: nestedWhere(depth) });
    t.equal(status, 200, `${depth} deep`);
    t.same(codes(body), ["BAD_USER_INPUT"], `${depth} deep`);
    t.match(body.errors?.[0]?.message, /^Invalid (where|_not_|variables)/, `${depth} deep`);
  }
  const after = await gateway.query(`{ people(q: "owojcik") { nodes { uid } } }`);
  t.same(after.body.data, { people: { nodes: [{ uid: "owojcik" }] } }, "the gateway still serves");
});

// 242 bytes that walked groups → members → groups → members and answered 1.9 MB, slowly.
const ATTACK = `{ groups(first: 100) { nodes { cn members(first: 100) { nodes { uid groups { cn members(first: 100) { nodes { uid groups { cn members(first: 100) { nodes { uid } } } } } } } } } } }`;

t.test("a query whose estimated cost passes the limit is refused before it runs", async (t) => {
  const trips = gateway.trips.searches;
  const { status, body } = await gateway.query(ATTACK);
  t.equal(status, 200);
  t.same(codes(body), ["GRAPHQL_COST_LIMIT_EXCEEDED"]);
  t.match(body.errors?.[0]?.extensions, { cost: Number, limit: 20_000 });
  t.ok((body.errors?.[0]?.extensions.cost as number) > 1e9);
  t.equal(body.data, undefined, "nothing ran");
  t.equal(gateway.trips.searches, trips, "not one directory read");

  // Variables count with their values; a page of 100 people with their groups is well within.
  const people = `query($n: Int) { people(first: $n) { nodes { uid displayName sn mail title groups { cn } } } }`;
  t.same(codes((await gateway.query(people, { n: 100 })).body), []);
  const nested = `query($n: Int) { groups(first: $n) { nodes { members(first: $n) { nodes { groups { cn } } } } } }`;
  t.same(codes((await gateway.query(nested, { n: 100 })).body), ["GRAPHQL_COST_LIMIT_EXCEEDED"]);
  t.same(codes((await gateway.query(nested, { n: 5 })).body), []);
});
