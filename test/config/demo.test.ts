import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import t from "tap";
import {
  BUILT_IN_REDACTED_ATTRIBUTES,
  DEMO_CONFIG_PATH,
  loadConfig,
  parseConfig,
} from "../../src/config/index.ts";

// Paths to files that go with a configuration (hooks, GraphQL schema, translations) resolve
// next to it; state (dataDir) resolves against the working directory.
const demoDir = dirname(DEMO_CONFIG_PATH);

t.test("the demo configuration loads with an empty environment", async (t) => {
  const cwd = t.testdir({});
  const config = await loadConfig({ argv: [], env: {}, cwd });
  t.same(config, {
    source: { path: DEMO_CONFIG_PATH, demo: true },
    server: { host: "127.0.0.1", port: 4173 },
    database: { dataDir: join(cwd, ".annal"), poolSize: 10, connectionTimeout: 10_000 },
    log: { level: "info" },
    directory: {
      url: "ldap://127.0.0.1:3890",
      bindDN: "cn=admin,dc=example,dc=org",
      password: "annal-demo",
      base: "dc=example,dc=org",
      identity: "auto",
      poolSize: 4,
      timeout: 10_000,
      types: [
        {
          name: "user",
          base: "ou=people,dc=example,dc=org",
          filter: "(objectClass=inetOrgPerson)",
        },
        {
          name: "group",
          base: "ou=groups,dc=example,dc=org",
          filter: "(objectClass=groupOfNames)",
        },
        {
          name: "service",
          base: "ou=services,dc=example,dc=org",
          filter: "(!(objectClass=organizationalUnit))",
        },
      ],
      capture: {
        source: "accesslog",
        interval: 250,
        reconcileInterval: 600_000,
        snapshotInterval: 86_400_000,
        redact: [...BUILT_IN_REDACTED_ATTRIBUTES],
        valuesPerWrite: 50_000,
      },
      demo: { port: 3890, dataDir: join(cwd, ".annal/slapd"), history: true },
    },
    hooks: { dir: join(demoDir, "hooks"), concurrency: 10 },
    workflows: {
      dir: join(demoDir, "workflows"),
      concurrency: 8,
      timerInterval: 1_000,
      stepsPerAdvance: 100,
      stickyRuns: 1000,
    },
    events: {},
    calendars: [
      {
        name: "office",
        timeZone: "Europe/Berlin",
        workingDays: [1, 2, 3, 4, 5],
        workingHours: { start: "09:00", end: "17:00" },
        holidays: { country: "DE", region: "BE", types: ["public"] },
        dates: [],
        default: false,
      },
    ],
    reviews: [
      {
        name: "quarterly-groups",
        title: "Quarterly review of group memberships",
        scope: { groups: "(|(cn=identity-team)(cn=finance))", base: "ou=groups,dc=example,dc=org" },
        reviewers: {
          by: "owner",
          managerAttribute: "manager",
          fallback: "cn=annal-admins,ou=groups,dc=example,dc=org",
        },
        schedule: "quarterly",
        deadline: "10bd",
        calendar: "office",
        escalation: [],
        undecided: "keep",
        reasonRequiredForKeep: false,
      },
    ],
    rest: {
      enabled: true,
      pageSize: 50,
      maxPageSize: 1000,
      timeZone: "UTC",
      export: { maxRows: 1_000_000, maxConcurrent: 4, batchSize: 1000 },
    },
    graphql: {
      introspection: true,
      schema: [join(demoDir, "gateway/*.graphql")],
      actorDN: "cn={name},ou=service-accounts,{base}",
      reads: "projection",
      compile: false,
      readYourWritesTimeout: 5000,
      limits: {
        maxTokens: 1000,
        maxDepth: 20,
        maxAliases: 15,
        maxDirectives: 50,
        maxCost: 20_000,
        maxEntries: 10_000,
      },
      types: {
        Person: { base: "ou=people,dc=example,dc=org", objectClass: ["inetOrgPerson"] },
        Group: { base: "ou=groups,dc=example,dc=org", objectClass: ["groupOfNames"] },
        Department: { base: "ou=people,dc=example,dc=org", objectClass: ["organizationalUnit"] },
      },
      rest: [
        {
          name: "annal",
          base: "http://127.0.0.1:4173",
          headers: {},
          query: {},
          timeoutMs: 10_000,
          options: {
            name: "annal",
            base: "http://127.0.0.1:4173",
            headers: {},
            query: {},
            timeoutMs: 10_000,
          },
        },
      ],
    },
    i18n: { fallbackLanguage: "en", translations: join(demoDir, "gateway/i18n") },
    auth: {
      maxPrincipals: 7000,
      principalsRefresh: 900_000,
      session: { idleTimeout: 7_200_000, absoluteTimeout: 43_200_000 },
      rateLimit: { perAccount: 5, perAddress: 100, window: 900_000 },
      oidc: {
        issuer: "http://127.0.0.1:4174",
        clientId: "annal-demo",
        // Like the directory's password: the demo provider's own, the default of a reference.
        clientSecret: "annal-demo-client-secret",
        allowInsecureIssuer: false,
        origin: "demo-sso",
        scopes: ["openid", "profile", "email", "groups"],
        groupsClaim: "groups",
        personFilter: "(uid={preferred_username})",
        demo: { port: 4174 },
      },
      ldap: { origin: "directory", userFilter: "(uid={login})" },
    },
    authorization: {
      grants: {
        read: [
          "cn=engineering,ou=groups,dc=example,dc=org",
          "cn=sales,ou=groups,dc=example,dc=org",
          "cn=finance,ou=groups,dc=example,dc=org",
          "cn=support,ou=groups,dc=example,dc=org",
        ],
        write: ["cn=annal-operators,ou=roles,dc=example,dc=org"],
        export: ["cn=annal-operators,ou=roles,dc=example,dc=org"],
        operator: ["cn=annal-operators,ou=roles,dc=example,dc=org"],
        auditor: ["cn=annal-auditors,ou=roles,dc=example,dc=org"],
      },
      activate: { version: 1, by: "the demo configuration" },
    },
    rules: { file: join(demoDir, "rules/index.ts") },
    messaging: {
      from: "Example IT <it@example.org>",
      transports: {
        smtp: { host: "127.0.0.1", port: 2525, secure: false, requireTLS: false, timeout: 30_000 },
      },
      demo: { port: 2525 },
    },
    templating: {
      partials: {
        welcome: join(demoDir, "templates/welcome.hbs"),
        signature: join(demoDir, "templates/signature.hbs"),
      },
    },
    audit: {},
    retention: { keep: { months: 84, ms: 0 }, interval: 86_400_000, streams: {} },
  });
  t.equal(config.database.url, undefined, "no url: the embedded PostgreSQL");
});

t.test("the demo's GraphQL backend annal follows the configured port", async (t) => {
  const cwd = t.testdir({});
  const byEnv = await loadConfig({ argv: [], env: { PORT: "8123" }, cwd });
  t.equal(byEnv.graphql.rest[0]?.base, "http://127.0.0.1:8123", "PORT");
  t.equal(byEnv.graphql.rest[0]?.options.base, "http://127.0.0.1:8123", "$options.base alike");
  const demo = await readFile(DEMO_CONFIG_PATH, "utf8");
  const moved = demo
    .replace(/^port = 4173\b/m, "port = 9001")
    .replace(/^host = .*$/m, 'host = "0.0.0.0"');
  t.not(moved, demo, "the demo names its port");
  const byFile = parseConfig(moved, { path: DEMO_CONFIG_PATH, env: {}, cwd });
  t.equal(byFile.graphql.rest[0]?.base, "http://127.0.0.1:9001", "[server] port, on loopback");
  const path = parseConfig(
    '[[graphql.rest]]\nname = "self"\nbase = "/api/"\n[server]\nport = 9002\n',
    {
      path: "annal.toml",
      env: {},
      cwd,
    },
  );
  t.equal(path.graphql.rest[0]?.base, "http://127.0.0.1:9002/api", "any path");
  t.throws(
    () =>
      parseConfig('[[graphql.rest]]\nname = "x"\nbase = "//evil.example"\n', {
        path: "a.toml",
        env: {},
        cwd,
      }),
    { code: "ANNAL_CONFIG_INVALID", message: /or a path on annal itself such as \/api/ },
  );
});

t.test("the demo takes LDAP_PASSWORD from the environment when it is set", async (t) => {
  const cwd = t.testdir({});
  const config = await loadConfig({ argv: [], env: { LDAP_PASSWORD: "s3cret" }, cwd });
  t.equal(config.directory?.password, "s3cret");
});

t.test("the demo configuration read through --config is still the demo", async (t) => {
  const cwd = t.testdir({});
  const config = await loadConfig({ argv: ["--config", DEMO_CONFIG_PATH], env: {}, cwd });
  t.equal(config.source.demo, true);
});

t.test("[directory.demo] requires directory.url to point at the demo slapd", async (t) => {
  const demo = await readFile(DEMO_CONFIG_PATH, "utf8");
  const moved = demo.replace('port = 3890\ndataDir = ".annal/slapd"', "port = 3999");
  t.not(moved, demo, "the demo's [directory.demo] was found");
  t.throws(() => parseConfig(moved, { path: "annal.toml", env: {} }), {
    code: "ANNAL_CONFIG_INVALID",
    keys: ["directory.url"],
    message: /ldap:\/\/127\.0\.0\.1:3999/,
  });
});
