import { join } from "node:path";
import { printSchema } from "graphql";
import t, { type Test } from "tap";
import { parseConfig } from "../../src/config/index.ts";
import { buildGateway, GatewaySchemaError } from "../../src/graphql/index.ts";
import { demoGatewayToml, REPO } from "../support/graphql-gateway.ts";

function config(toml: string) {
  return parseConfig(
    `[directory]\nurl = "ldap://127.0.0.1:389"\nbindDN = "cn=admin,dc=example,dc=org"\npassword = "\${P}"\nbase = "dc=example,dc=org"\n\n${toml}`,
    {
      // Beside the demo configuration, whose [graphql] part these tests use: its relative
      // paths resolve from there.
      path: join(REPO, "ops/demo/test.toml"),
      env: { P: "x" },
      cwd: REPO,
    },
  );
}

async function schemaError(t: Test, sdl: string, extra = ""): Promise<GatewaySchemaError> {
  const dir = t.testdir({ "bad.graphql": sdl });
  const error = await buildGateway(
    config(`[graphql]\nschema = ["${join(dir, "*.graphql")}"]\n${extra}`),
  ).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof GatewaySchemaError))
    throw new Error(`expected a schema error, got ${String(error)}`);
  t.equal(error.code, "ANNAL_GRAPHQL_SCHEMA_INVALID");
  t.match(error.file, /bad\.graphql$/, "names the file");
  return error;
}

t.test("the demo's example schema builds and exercises every directive", async (t) => {
  const gateway = await buildGateway(config(await demoGatewayToml()));
  const sdl = (
    await Promise.all(
      gateway.files.map((file) =>
        import("node:fs/promises").then((fs) => fs.readFile(file, "utf8")),
      ),
    )
  ).join("\n");
  const directives = gateway.schema
    .getDirectives()
    .filter((d) => !["include", "skip", "deprecated", "specifiedBy", "oneOf"].includes(d.name))
    // `@at` is an operation's (test/graphql/at.test.ts), not a schema's.
    .filter((d) => d.name !== "at");
  t.equal(directives.length, 25);
  for (const directive of directives)
    t.match(sdl, `@${directive.name}`, `@${directive.name} is used`);
  const printed = printSchema(gateway.schema);
  t.match(printed, /type PersonConnection \{\n\s+nodes: \[Person!\]!/, "connections are implied");
  t.match(printed, /type Mutation \{/);
  t.ok(gateway.attributes.includes("jpegPhoto") && gateway.binaryAttributes.includes("jpegPhoto"));
});

t.test("a syntax error names file, line and column", async (t) => {
  const error = await schemaError(t, `extend type Query {\n  broken(: String\n}\n`);
  t.equal(error.line, 2);
  t.match(error.message, /bad\.graphql:2:\d+: Syntax Error/);
});

t.test("a directive error names file, line and the directive", async (t) => {
  const bad = await schemaError(
    t,
    `type Thing { name: String }\nextend type Query {\n  things: ThingConnection\n    @ldapSearch(base: "ou=x,dc=example,dc=org", filter: "(objectClass=person")\n}\n`,
  );
  t.equal(bad.line, 4);
  t.match(bad.message, /@ldapSearch on Query\.things: filter is not an RFC 4515 filter/);

  const unknownBackend = await schemaError(
    t,
    `extend type Query {\n  x: String @rest(backend: "nope")\n}\n`,
  );
  t.match(
    unknownBackend.message,
    /bad\.graphql:2:\d+: @rest on Query\.x: there is no REST backend named "nope"/,
  );

  const fieldset = await schemaError(
    t,
    `type P { a: String @ldapField\n  set: Fieldset @fieldset(fields: ["a", "b"]) }\nextend type Query { p: P @ldapFindByDn(dn: "cn=x") }\n`,
  );
  t.match(fieldset.message, /@fieldset on P\.set: P has no field b/);

  const nested = await schemaError(
    t,
    `type P { o: P @ldapField\n set: Fieldset @fieldset(fields: ["o"]) }\nextend type Query { p: P @ldapFindByDn(dn: "cn=x") }\n`,
  );
  t.match(nested.message, /a fieldset holds scalars, Labeled types and fieldsets/);

  const noBase = await schemaError(
    t,
    `type P { a: String @ldapField }\ninput PI { a: String }\nextend type Mutation { add(rdn: DN!, input: PI): P @ldapAdd }\n`,
  );
  t.match(noBase.message, /no base DN is configured for P/);
  t.match(noBase.hint, /\[graphql\.types\.P\] base/);

  const attribute = await schemaError(
    t,
    `type P { a: String @ldapField(attribute: "no such") }\nextend type Query { p: P @ldapFindByDn(dn: "cn=x") }\n`,
  );
  t.match(attribute.message, /is not an LDAP attribute name/);

  const q = await schemaError(
    t,
    `type P { a: String @ldapField }\nextend type Query { p(q: String): P @ldapFind(base: "dc=x") }\n`,
  );
  t.match(q.message, /q argument but the directive names no qAttributes/);

  const unknownDirective = await schemaError(t, `extend type Query { x: String @ldapFeld }\n`);
  t.match(unknownDirective.message, /Unknown directive "@ldapFeld"/);
});

t.test("a glob that matches no file stops start-up", async (t) => {
  const error = await buildGateway(
    config(`[graphql]\nschema = ["/nonexistent/*.graphql"]\n`),
  ).catch((e: unknown) => e);
  t.match(error, { code: "ANNAL_GRAPHQL_SCHEMA_INVALID", message: /no schema file matches/ });
});

t.test("configuration sections: defaults and refusals", async (t) => {
  const defaults = config("");
  t.same(defaults.graphql.limits, {
    maxTokens: 1000,
    maxDepth: 20,
    maxAliases: 15,
    maxDirectives: 50,
    maxCost: 20_000,
    maxEntries: 10_000,
  });
  t.equal(defaults.graphql.introspection, false);
  t.equal(defaults.graphql.actorDN, "cn={name},ou=service-accounts,{base}");
  t.same(defaults.graphql.rest, []);
  t.equal(defaults.i18n.fallbackLanguage, "en");
  t.throws(() => config(`[[graphql.rest]]\nname = "a"\nbase = "ftp://x"\n`), {
    code: "ANNAL_CONFIG_INVALID",
  });
  t.throws(
    () =>
      config(
        `[[graphql.rest]]\nname = "a"\nbase = "http://x"\n[[graphql.rest]]\nname = "a"\nbase = "http://y"\n`,
      ),
    {
      message: /already defined/,
    },
  );
  t.throws(() => config(`[graphql]\nactorDN = "cn=fixed"\n`), { message: /\{name\} or \{id\}/ });
  t.throws(
    () => config(`[[graphql.rest]]\nname = "a"\nbase = "http://x"\npassword = "literal"\n`),
    {
      code: "ANNAL_CONFIG_SECRET_LITERAL",
    },
  );
  const options = config(`[[graphql.rest]]\nname = "a"\nbase = "http://x"\ntenant = "acme"\n`)
    .graphql.rest[0]!;
  t.equal(options.options.tenant, "acme", "other keys are options");
});
