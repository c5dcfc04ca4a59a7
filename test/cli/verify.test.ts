import { mkdir, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import t from "tap";
import { checkNodeVersion } from "../../src/cli/commands/verify.ts";
import { DEMO_CONFIG_PATH } from "../../src/config/index.ts";
import { freePort } from "../../src/ports.ts";
import { testDatabase } from "../support/postgres.ts";
import { configDir, runAnnal } from "./support.ts";

t.setTimeout(300_000);

const REPO = path.resolve(import.meta.dirname, "../..");

t.test("annal verify prints one ok line per check and passes", async (t) => {
  const { url } = await testDatabase(t);
  const { file } = await configDir(t, "");
  const run = await runAnnal(["verify", "--config", file], { env: { DATABASE_URL: url } });
  t.equal(run.code, 0, run.stderr);
  const lines = run.stdout.trimEnd().split("\n");
  t.match(lines, [
    /^ok node: v\d+/,
    `ok config: ${file}`,
    "ok entry types: 0",
    "ok hooks: none configured",
    "ok graphql: 0 schema file(s)",
    "ok workflows: none configured",
    /^ok database: postgres:\/\/.+ answers$/,
    /^ok postgres: \d+\.\d+/,
    "ok migrations: current",
    // No [authorization.activate]: not a failure, but said with its code and a hint.
    /^warn access: ANNAL_ACCESS_NOT_ACTIVE: no Access Configuration will be active/,
    /^warn access: hint: .*\[authorization\.activate\]/,
  ]);
  t.equal(lines.length, 11);
});

t.test("annal verify says pending migrations will be applied, and passes", async (t) => {
  const { url } = await testDatabase(t, { migrated: false });
  const { file } = await configDir(t, "");
  const run = await runAnnal(["verify", "--config", file], { env: { DATABASE_URL: url } });
  t.equal(run.code, 0, run.stderr);
  t.match(
    run.stdout,
    /^ok migrations: \d+ pending \(ANNAL_MIGRATIONS_PENDING\); annal start applies them$/m,
  );
});

t.test("annal verify fails on an unreachable database after the checks before it", async (t) => {
  const { file } = await configDir(t, "");
  const url = `postgres://annal:pw-not-shown@127.0.0.1:${await freePort()}/annal`;
  const run = await runAnnal(["verify", "--config", file], { env: { DATABASE_URL: url } });
  t.equal(run.code, 1);
  t.match(
    run.stdout,
    /^ok node: .+\nok config: .+\n(ok (entry types|hooks|graphql|workflows): .+\n){4}$/,
  );
  t.match(run.stderr, /^annal: ANNAL_DATABASE_UNREACHABLE: .+\nannal: hint: /);
  t.notMatch(run.stderr, /pw-not-shown/);
});

t.test("annal verify fails on a migration this program does not know", async (t) => {
  const { url, pool } = await testDatabase(t);
  await pool.query("INSERT INTO migrations (id, name, hash) VALUES (99, 'from-the-future', 'x')");
  const { file } = await configDir(t, "");
  const run = await runAnnal(["verify", "--config", file], { env: { DATABASE_URL: url } });
  t.equal(run.code, 1);
  t.match(run.stderr, /^annal: WF_DATABASE_MIGRATION_MISMATCH: .*99_from-the-future/);
});

t.test("Node.js older than 26 is ANNAL_NODE_VERSION_MISMATCH", async (t) => {
  t.throws(() => checkNodeVersion("v20.20.2"), { code: "ANNAL_NODE_VERSION_MISMATCH" });
  t.doesNotThrow(() => checkNodeVersion("v26.10.0"));
  t.doesNotThrow(() => checkNodeVersion("v27.0.0"));
});

t.test("the demo configuration copied to ./annal.toml as its comment says verifies", async (t) => {
  const { url } = await testDatabase(t);
  // The repository's root, as the comment has it: ops/ beside the copy, nothing else.
  const { dir } = await configDir(t, "");
  await symlink(path.join(REPO, "ops"), path.join(dir, "ops"));
  const demo = await readFile(DEMO_CONFIG_PATH, "utf8");
  t.match(demo, /cp ops\/demo\/annal\.toml annal\.toml/, "the comment says how to copy it");
  // "put ops/demo/ before each path marked 'beside this file'"
  const marked = /^(\w+ = \[?")([^"]+)(".*# beside this file)$/gm;
  const copy = demo.replace(marked, "$1ops/demo/$2$3");
  t.equal(
    copy.match(/^\w+ = \[?"ops\/demo\//gm)?.length,
    7,
    "seven paths go with the configuration (schema, translations, hooks, workflows, rules, two templates)",
  );
  await writeFile(path.join(dir, "annal.toml"), copy);
  const run = await runAnnal(["verify"], { cwd: dir, env: { DATABASE_URL: url } });
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, `ok config: ${path.join(dir, "annal.toml")}\n`);
  t.match(run.stdout, /^ok entry types: 3$/m);
  t.match(run.stdout, /^ok hooks: hr\/employees, tickets\/updates from .*ops\/demo\/hooks$/m);
  t.match(run.stdout, /^ok graphql: 4 schema file\(s\)$/m);
  t.match(
    run.stdout,
    // annal.review-item: the demo has [[reviews]], whose items are instances of it.
    /^ok workflows: access-request@1, default-groups@1, joiner@1, leaver@1, annal.review-item@2 from .*ops\/demo\/workflows$/m,
  );

  // Copied as it is, the paths beside the copy name nothing: refused, saying where to look.
  await writeFile(path.join(dir, "annal.toml"), demo);
  const verbatim = await runAnnal(["verify"], { cwd: dir, env: { DATABASE_URL: url } });
  t.equal(verbatim.code, 1);
  t.match(
    verbatim.stderr,
    /^annal: ANNAL_HOOKS_DIR_NOT_FOUND|^annal: ANNAL_GRAPHQL_SCHEMA_INVALID/,
  );
});

t.test("annal verify refuses what annal start refuses, with the same code", async (t) => {
  const { url } = await testDatabase(t);
  const collidingTypes = `[directory]
url = "ldap://127.0.0.1:1"
bindDN = "cn=admin,dc=example,dc=org"
password = "\${LDAP_PASSWORD:-x}"
base = "dc=example,dc=org"
[[directory.types]]
name = "user"
base = "ou=people,dc=example,dc=org"
[[directory.types]]
name = "users"
base = "ou=more,dc=example,dc=org"
`;
  const cases: { what: string; toml: string; files?: Record<string, string>; code: string }[] = [
    {
      what: "entry type names that collide",
      toml: collidingTypes,
      code: "ANNAL_TYPE_NAME_COLLISION",
    },
    {
      what: "a hooks file that fails to load",
      toml: `[hooks]\ndir = "hooks"\n`,
      files: { "hooks/broken.ts": "export default {};\n" },
      code: "ANNAL_HOOKS_INVALID",
    },
    {
      what: "a gateway schema that does not build",
      toml: `[graphql]\nschema = ["gateway/*.graphql"]\n`,
      files: { "gateway/bad.graphql": "type Query { me: Nowhere }\n" },
      code: "ANNAL_GRAPHQL_SCHEMA_INVALID",
    },
    {
      what: "a rules file whose endpoints factory throws",
      toml: `[rules]\nfile = "rules/index.ts"\n`,
      files: {
        "rules/index.ts": `import { defineEndpoints } from "annal";\nexport const endpoints = defineEndpoints(({ app }) => {\n  app.get("/x", (c) => c.text("x"));\n  throw new Error("forgot something");\n});\n`,
      },
      code: "ANNAL_RULES_INVALID",
    },
  ];
  for (const c of cases) {
    const { dir, file } = await configDir(t, c.toml);
    for (const [name, text] of Object.entries(c.files ?? {})) {
      await mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await writeFile(path.join(dir, name), text);
    }
    const env = { DATABASE_URL: url, PORT: String(await freePort()) };
    const start = await runAnnal(["start", "--config", file], { env });
    const verify = await runAnnal(["verify", "--config", file], { env });
    t.equal(start.code, 1, `start refuses ${c.what}`);
    t.match(start.stderr, `annal: ${c.code}: `, `start: ${c.what}`);
    t.equal(verify.code, 1, `verify refuses ${c.what}`);
    t.match(verify.stderr, new RegExp(`^annal: ${c.code}: `), `verify: ${c.what}`);
  }
});
