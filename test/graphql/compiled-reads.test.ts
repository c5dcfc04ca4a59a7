import { randomBytes } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import Fastify, { type FastifyBaseLogger } from "fastify";
import { Client } from "ldapts";
import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { createAuthentication, createToken } from "../../src/auth/index.ts";
import { sampleLdif } from "../../src/demo/index.ts";
import { createDirectoryClient, loadDirectorySchema } from "../../src/directory/index.ts";
import { NameSet } from "../../src/events/index.ts";
import { buildGateway, graphqlPlugin } from "../../src/graphql/index.ts";
import { compileStats } from "../../src/graphql/gateway/compile.ts";
import { createLogger } from "../../src/logger.ts";
import { waitForProjection } from "../../src/projector/index.ts";
import { GATEWAY_TOML } from "../support/accounts.ts";
import { appConfig } from "../support/app-config.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";
import { startSlapd } from "../support/slapd.ts";

const BASE = "dc=example,dc=org";
const ODD_DN = `uid=odd,ou=people,${BASE}`;
/** A title JSON must escape: quotes, a backslash, a newline, and a tab. */
const ODD_TITLE = 'Head of "Quotes" \\ back\nslash\ttab ünïcødé 😀 </script>';

/** Fields of the test's own: a redacted attribute, a binary one as stored, a search outside. */
const EXTRA_SCHEMA = `
extend type Person {
  "The password: capture redacts it, the projection does not hold it."
  secret: String @ldapField(attribute: "userPassword")
  "The photo as text, not asked as bytes."
  photoText: String @ldapField(attribute: "jpegPhoto")
  "The phone numbers, or the mobile ones when there are none."
  phones: [String!]! @ldapField(attribute: "telephoneNumber", fallbackAttributes: ["mobile"]) @ensureArray
}

extend type Query {
  "People of a base outside [directory] base: no entry there that capture records."
  outsiders(first: Int, after: String): PersonConnection
    @ldapSearch(base: "ou=people,dc=elsewhere,dc=org", filter: "(objectClass=inetOrgPerson)")
}
`;

/**
 * Each query and whether the compiler answers it (true) or leaves it to the resolvers.
 * `$after` is replaced by the endCursor of the query before it, `$moment` by a moment after the
 * import.
 */
const CORPUS: readonly (readonly [string, boolean])[] = [
  [
    `{ people(first: 100) { nodes { uid displayName mail title telephoneNumbers groups { cn } } } }`,
    true,
  ],
  [
    `{ people(first: 7) { totalCount nodes { uid sn givenName mobile phones } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
    true,
  ],
  [
    `{ people(first: 7, after: "$after") { totalCount nodes { uid } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`,
    true,
  ],
  [
    `{ people(first: 7, after: "$after") { nodes { uid } pageInfo { endCursor hasNextPage } } }`,
    true,
  ],
  [
    `{ people(first: 5, where: { department: { eq: "Sales" }, city: { eq: "Paris" } }) { totalCount nodes { displayName title groups { cn __typename } } pageInfo { hasNextPage endCursor } } }`,
    true,
  ],
  [
    `{ people(first: 20, where: { _or_: [{ title: { contains: "engineer" } }, { sn: { startsWith: "M" } }] }) { nodes { uid title } } }`,
    true,
  ],
  [`{ people(first: 10, q: "ross") { totalCount nodes { uid } } }`, true],
  [`{ people(first: 10, by: { cities: ["Berlin", "Paris"] }) { totalCount nodes { uid } } }`, true],
  [
    `query Named($first: Int, $q: String) { __typename everyone: people(first: $first, q: $q) { __typename count: totalCount list: nodes { __typename id: uid name: displayName } } }`,
    true,
  ],
  // Empty results.
  [
    `{ people(first: 3, q: "nobody-is-called-this") { totalCount nodes { uid groups { cn } } pageInfo { hasNextPage startCursor endCursor } } }`,
    true,
  ],
  // A value JSON must escape.
  [`{ people(first: 2, q: "odd") { nodes { uid title telephoneNumbers } } }`, true],
  // A large group: read, then its cn kept (the second time, from memory).
  [`{ people(first: 2, q: "odd") { nodes { uid groups { cn label } } } }`, true],
  [`{ people(first: 2, q: "odd") { nodes { uid groups { cn label } } } }`, true],
  // A binary value as the log keeps it (not asked as bytes) is compiled; asked as bytes, not.
  [`{ people(first: 100) { nodes { uid photoText } } }`, true],
  [`{ people(first: 100) { nodes { uid photoText photo } } }`, false],
  // An attribute capture redacts: the directory answers it.
  [`{ people(first: 3) { nodes { uid secret } } }`, false],
  // Entries outside what capture records: the directory answers (nothing there).
  [`{ outsiders(first: 3) { totalCount nodes { uid } } }`, false],
  // Fields and arguments the compiler does not know.
  [`{ people(first: 3) { nodes { uid manager { uid } } } }`, false],
  [`{ people(first: 3) { nodes { ...P } } } fragment P on Person { uid }`, false],
  [`{ people(first: 3) { nodes { uid @include(if: true) } } }`, false],
  [`{ people(first: 300) { nodes { uid } } }`, false],
  [`{ people(first: 3, after: "not a cursor") { nodes { uid } } }`, false],
  [`{ groups(first: 5) { nodes { cn } } people(first: 2) { nodes { uid } } }`, false],
  [`query @at(moment: "$moment") { people(first: 3) { nodes { uid } } }`, false],
  // Required values missing (a person without sn would be null): the resolvers answer.
  [`{ groups(first: 50) { totalCount nodes { cn label } } }`, true],
  [`{ departments { nodes { ou label } } }`, true],
];

t.test("a compiled query answers exactly as the resolvers do", async (t) => {
  const slapd = await startSlapd({ seedLdif: sampleLdif() });
  t.teardown(() => slapd.stop());
  const db = await testDatabase(t);
  const schemaDir = path.join(t.testdir(), "schema");
  const config = await appConfig(t, {
    db,
    slapd,
    captureInterval: "250ms",
    // Groups typed too: a typed row's values may be kept (its entry and version name it).
    extraToml: `${GATEWAY_TOML.replace("[graphql]\n", "[graphql]\ncompile = true\n").replace('schema = ["', `schema = ["${schemaDir}/*.graphql", "`)}
[[directory.types]]
name = "group"
base = "ou=groups,${BASE}"
filter = "(objectClass=groupOfNames)"
`,
  });
  // In the test's directory, which appConfig makes afresh.
  await mkdir(schemaDir, { recursive: true });
  await writeFile(path.join(schemaDir, "extra.graphql"), EXTRA_SCHEMA);
  t.equal(config.graphql.compile, true, "compiling is switched on");
  // A person whose values need escaping, and two phone numbers: before the first start.
  const ldap = new Client({ url: slapd.url });
  await ldap.bind(slapd.bindDN, slapd.password);
  await ldap.add(ODD_DN, {
    objectClass: ["inetOrgPerson"],
    uid: "odd",
    cn: 'Odd "Escapes" O\'Brien',
    sn: "O'Brien",
    title: ODD_TITLE,
    telephoneNumber: ["+49 30 1111", "+49 30 2222"],
  });
  // A group whose stored attributes are large (values that do not compress): what its
  // members' pages read of it is kept between statements.
  await ldap.add(`cn=big,ou=groups,${BASE}`, {
    objectClass: ["groupOfNames"],
    cn: "big",
    member: [ODD_DN],
    description: Array.from({ length: 80 }, () => randomBytes(600).toString("base64")),
  });
  await ldap.unbind();
  const annal = await startAnnal({ config, log: pino({ level: "silent" }) });
  t.teardown(() => annal.stop());
  const { token } = await createToken(db.pool, annal.store, { name: "reader", access: ["read"] });
  const { token: noRead } = await createToken(db.pool, annal.store, {
    name: "no-reader",
    access: [],
  });
  await eventually(
    async () =>
      (await db.pool.query("SELECT 1 FROM capture_checkpoints WHERE source = 'accesslog'"))
        .rowCount,
    { what: "the first start's import" },
  );
  await waitForProjection(db.pool, "entries", await annal.store.head(), 30_000);

  // The same gateway over the same projection and directory, compiling switched off.
  const directory = createDirectoryClient({
    url: slapd.url,
    bindDN: slapd.bindDN,
    password: slapd.password,
  });
  t.teardown(() => directory.close());
  const resolversConfig = { ...config, graphql: { ...config.graphql, compile: false } };
  const server = Fastify({ loggerInstance: createLogger("silent") as FastifyBaseLogger });
  await server.register(
    graphqlPlugin({
      pool: db.pool,
      authentication: createAuthentication({ pool: db.pool }),
      directory,
      config: resolversConfig,
      log: createLogger("silent"),
      gateway: await buildGateway(resolversConfig),
      projection: {
        db: db.pool,
        base: BASE,
        schema: await loadDirectorySchema(directory),
        redacted: new NameSet(config.directory!.capture.redact),
      },
    }),
  );
  const resolversUrl = `${await server.listen({ host: "127.0.0.1", port: 0 })}/graphql`;
  t.teardown(() => server.close());

  const ask = async (url: string, query: string, bearer = token) => {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${bearer}` },
      body: JSON.stringify({ query, variables: { first: 4, q: "r" } }),
    });
    return {
      status: response.status,
      type: response.headers.get("content-type"),
      body: (await response.json()) as {
        data?: Record<string, { pageInfo?: { endCursor?: string } }>;
        errors?: unknown;
        extensions?: { reads?: string };
      },
    };
  };
  await eventually(
    async () =>
      (await ask(`${annal.url}/graphql`, "{ __typename }")).body.extensions?.reads === "projection",
    { what: "the gateway reading the projection" },
  );

  await t.test("every query of the corpus", async (t) => {
    let after = "";
    const moment = new Date().toISOString();
    for (const [text, compiles] of CORPUS) {
      const query = text.replace("$after", after).replace("$moment", moment);
      const before = compileStats.compiled;
      const compiled = await ask(`${annal.url}/graphql`, query);
      const took = compileStats.compiled - before;
      const resolved = await ask(resolversUrl, query);
      t.same(compiled.body, resolved.body, query);
      t.equal(compiled.status, resolved.status, `${query}: status`);
      t.equal(compiled.type, resolved.type, `${query}: media type`);
      t.equal(took, compiles ? 1 : 0, `${query}: ${compiles ? "compiled" : "resolved"}`);
      after = Object.values(compiled.body.data ?? {})[0]?.pageInfo?.endCursor ?? after;
    }
  });

  await t.test("the benchmark's page, its values as the projection holds them", async (t) => {
    const { body } = await ask(
      `${annal.url}/graphql`,
      `{ people(first: 2, q: "odd") { nodes { uid title telephoneNumbers groups { cn } } } }`,
    );
    t.same(body.data, {
      people: {
        nodes: [
          {
            uid: "odd",
            title: ODD_TITLE,
            telephoneNumbers: ["+49 30 1111", "+49 30 2222"],
            groups: [{ cn: "big" }],
          },
        ],
      },
    });
    const page = await ask(
      `${annal.url}/graphql`,
      `{ people(first: 100) { nodes { uid groups { cn } } } }`,
    );
    const nodes = (page.body.data!.people as unknown as { nodes: { groups: unknown[] }[] }).nodes;
    t.equal(nodes.length, 100);
    t.ok(
      nodes.some((node) => node.groups.length > 1),
      "people belong to groups",
    );
  });

  await t.test("a caller without read access gets the resolvers' error", async (t) => {
    const before = compileStats.compiled;
    const query = `{ people(first: 3) { nodes { uid } } }`;
    const compiled = await ask(`${annal.url}/graphql`, query, noRead);
    const resolved = await ask(resolversUrl, query, noRead);
    t.same(compiled.body, resolved.body);
    t.match(compiled.body.errors, [{ extensions: { code: "FORBIDDEN" } }]);
    t.equal(compileStats.compiled, before, "not compiled");
  });
});
