import t from "tap";
import { BUILT_IN_REDACTED_ATTRIBUTES, parseConfig } from "../../src/config/index.ts";

const path = "/srv/annal.toml";
const env = { LDAP_PASSWORD: "pw" };

const directory = (extra = "") =>
  `[directory]\nurl = "ldap://127.0.0.1:389"\nbindDN = "cn=admin,dc=example,dc=org"\n` +
  `password = "\${LDAP_PASSWORD}"\nbase = "dc=example,dc=org"\n${extra}`;

t.test("an empty file gives every default and no directory", async (t) => {
  const config = parseConfig("", { path, env: {}, cwd: "/var/lib/annal" });
  t.same(config, {
    source: { path, demo: false },
    server: { host: "127.0.0.1", port: 4173 },
    database: { dataDir: "/var/lib/annal/.annal", poolSize: 10, connectionTimeout: 10_000 },
    log: { level: "info" },
    calendars: [],
    reviews: [],
    rest: {
      enabled: true,
      pageSize: 50,
      maxPageSize: 1000,
      timeZone: "UTC",
      export: { maxRows: 1_000_000, maxConcurrent: 4, batchSize: 1000 },
    },
    graphql: {
      introspection: false,
      reads: "projection",
      compile: false,
      readYourWritesTimeout: 5000,
      schema: [],
      actorDN: "cn={name},ou=service-accounts,{base}",
      limits: {
        maxTokens: 1000,
        maxDepth: 20,
        maxAliases: 15,
        maxDirectives: 50,
        maxCost: 20_000,
        maxEntries: 10_000,
      },
      types: {},
      rest: [],
    },
    i18n: { fallbackLanguage: "en" },
    auth: {
      maxPrincipals: 7000,
      principalsRefresh: 900_000,
      session: { idleTimeout: 7_200_000, absoluteTimeout: 43_200_000 },
      rateLimit: { perAccount: 5, perAddress: 100, window: 900_000 },
    },
    authorization: { grants: {} },
    events: {},

    audit: {},
    retention: { interval: 86_400_000, streams: {} },
  });
  t.equal(config.directory, undefined);
});

t.test(
  "[events] publication takes a plain PostgreSQL name and refuses anything else",
  async (t) => {
    const config = parseConfig('[events]\npublication = "annal_events"\n', { path, env: {} });
    t.equal(config.events.publication, "annal_events");
    for (const name of [
      "Annal",
      "1events",
      "annal-events",
      'x"; DROP TABLE events; --',
      "a".repeat(64),
    ]) {
      t.throws(
        () => parseConfig(`[events]\npublication = ${JSON.stringify(name)}\n`, { path, env: {} }),
        {
          code: "ANNAL_CONFIG_INVALID",
          message: /events\.publication/,
        },
        name,
      );
    }
  },
);

t.test("[retention.streams] takes workflow beside entry, and not alone", async (t) => {
  const config = parseConfig('[retention]\nkeep = "7y"\n[retention.streams]\nworkflow = "2y"\n', {
    path,
    env: {},
  });
  t.same(config.retention.streams.workflow, { ms: 0, months: 24 });
  t.throws(
    () => parseConfig('[retention.streams]\nworkflow = "2y"\n', { path, env: {} }),
    { code: "ANNAL_CONFIG_INVALID", message: /retention\.streams\.workflow/ },
    "without a horizon for the entries there is no run",
  );
  t.throws(() => parseConfig('[retention.streams]\naccount = "2y"\n', { path, env: {} }), {
    code: "ANNAL_CONFIG_UNKNOWN_KEY",
    hint: /the keys allowed in retention\.streams are: entry, workflow/,
  });
});

t.test("an unknown top-level key is refused by its name", async (t) => {
  t.throws(() => parseConfig("[sever]\nport = 1\n", { path, env: {} }), {
    code: "ANNAL_CONFIG_UNKNOWN_KEY",
    keys: ["sever"],
    message: /unknown key sever in \/srv\/annal\.toml/,
    hint: /server, database, log, directory/,
  });
});

t.test("an unknown nested key is refused by its full path", async (t) => {
  t.throws(() => parseConfig("[server]\nprot = 8080\n", { path, env: {} }), {
    code: "ANNAL_CONFIG_UNKNOWN_KEY",
    keys: ["server.prot"],
    message: /server\.prot/,
    hint: /host, port/,
  });
  t.throws(
    () =>
      parseConfig(
        directory('[[directory.types]]\nname = "user"\nbase = "ou=people"\nscope = "one"\n'),
        {
          path,
          env,
        },
      ),
    {
      code: "ANNAL_CONFIG_UNKNOWN_KEY",
      keys: ["directory.types[0].scope"],
      hint: /name, base, filter/,
    },
  );
  t.throws(() => parseConfig(directory('[directory.capture]\nintervall = "5s"\n'), { path, env }), {
    code: "ANNAL_CONFIG_UNKNOWN_KEY",
    keys: ["directory.capture.intervall"],
  });
});

t.test("unknown keys are reported before the required keys they leave missing", async (t) => {
  const text = directory().replace("url =", "ulr =");
  t.throws(() => parseConfig(text, { path, env }), {
    code: "ANNAL_CONFIG_UNKNOWN_KEY",
    keys: ["directory.ulr"],
  });
});

t.test("a wrong value is named by its path with what was expected", async (t) => {
  t.throws(() => parseConfig('[server]\nport = "http"\n', { path, env: {} }), {
    code: "ANNAL_CONFIG_INVALID",
    keys: ["server.port"],
    message: /server\.port: expected a whole number from 1 to 65535/,
  });
  t.throws(() => parseConfig('[log]\nlevel = "loud"\n', { path, env: {} }), {
    code: "ANNAL_CONFIG_INVALID",
    message: /log\.level: expected one of fatal, error, warn, info, debug, trace, silent/,
  });
  t.throws(() => parseConfig('server = "x"\n', { path, env: {} }), {
    code: "ANNAL_CONFIG_INVALID",
    message: /server: expected a table: \[server\]/,
  });
  t.throws(() => parseConfig('[directory]\nurl = "http://x"\n', { path, env }), {
    code: "ANNAL_CONFIG_INVALID",
    keys: ["directory.url", "directory.bindDN", "directory.password", "directory.base"],
    message: /directory\.url: expected a URL.*directory\.bindDN is required/,
  });
});

t.test("a directory resolves its defaults", async (t) => {
  const config = parseConfig(directory(), { path, env });
  t.same(config.directory, {
    url: "ldap://127.0.0.1:389",
    bindDN: "cn=admin,dc=example,dc=org",
    password: "pw",
    base: "dc=example,dc=org",
    identity: "auto",
    poolSize: 4,
    timeout: 10_000,
    types: [],
    capture: {
      source: "accesslog",
      interval: 250,
      reconcileInterval: 600_000,
      snapshotInterval: 86_400_000,
      redact: [...BUILT_IN_REDACTED_ATTRIBUTES],
      valuesPerWrite: 50_000,
    },
  });
});

t.test(
  "capture intervals are durations in milliseconds; a zero snapshot interval disables",
  async (t) => {
    const config = parseConfig(
      directory(
        '[directory.capture]\nsource = "poll"\ninterval = "500ms"\nreconcileInterval = "1h30m"\nsnapshotInterval = "0"\n',
      ),
      { path, env },
    );
    t.match(config.directory?.capture, {
      source: "poll",
      interval: 500,
      reconcileInterval: 5_400_000,
      snapshotInterval: 0,
    });
    const weeks = parseConfig(
      directory('[directory.capture]\ninterval = "PT1S"\nsnapshotInterval = "1w"\n'),
      { path, env },
    );
    t.match(weeks.directory?.capture, { interval: 1_000, snapshotInterval: 604_800_000 });
    t.throws(() => parseConfig(directory('[directory.capture]\ninterval = "0"\n'), { path, env }), {
      code: "ANNAL_CONFIG_INVALID",
      message: /directory\.capture\.interval: must be longer than 0/,
    });
    t.throws(() => parseConfig(directory("timeout = 10\n"), { path, env }), {
      code: "ANNAL_CONFIG_INVALID",
      message: /directory\.timeout: expected a duration/,
    });
    t.throws(() => parseConfig(directory('timeout = "10 s"\n'), { path, env }), {
      code: "ANNAL_CONFIG_INVALID",
      message: /directory\.timeout: "10 s" is not a duration/,
    });
  },
);

t.test("redact adds to the built-in list, without duplicates in any case", async (t) => {
  const config = parseConfig(
    directory('[directory.capture]\nredact = ["USERPASSWORD", "carLicense", "carlicense"]\n'),
    { path, env },
  );
  t.same(config.directory?.capture.redact, [...BUILT_IN_REDACTED_ATTRIBUTES, "carLicense"]);
  t.throws(
    () => parseConfig(directory('[directory.capture]\nredact = ["bad name"]\n'), { path, env }),
    {
      code: "ANNAL_CONFIG_INVALID",
      keys: ["directory.capture.redact[0]"],
    },
  );
});

t.test("type names must be well formed and unique regardless of case", async (t) => {
  const types = (...names: string[]) =>
    directory(
      names.map((name) => `[[directory.types]]\nname = "${name}"\nbase = "ou=x"\n`).join(""),
    );
  t.same(
    parseConfig(types("user", "service_account", "group-2"), { path, env }).directory?.types.map(
      (type) => type.name,
    ),
    ["user", "service_account", "group-2"],
  );
  for (const name of ["2fa", "with space", "", "_x"]) {
    t.throws(
      () => parseConfig(types(name), { path, env }),
      { code: "ANNAL_CONFIG_INVALID", keys: ["directory.types[0].name"] },
      name,
    );
  }
  t.throws(() => parseConfig(types("user", "group", "User"), { path, env }), {
    code: "ANNAL_CONFIG_INVALID",
    keys: ["directory.types[2].name"],
    message: /"User" is already defined/,
  });
});

t.test("a type's filter must be a parenthesized LDAP filter", async (t) => {
  t.throws(
    () =>
      parseConfig(
        directory(
          '[[directory.types]]\nname = "u"\nbase = "ou=x"\nfilter = "objectClass=person"\n',
        ),
        {
          path,
          env,
        },
      ),
    { code: "ANNAL_CONFIG_INVALID", keys: ["directory.types[0].filter"] },
  );
});

t.test("a TOML syntax error gives the file, line and column", async (t) => {
  const text = '[server]\nhost = "127.0.0.1"\nport = = 4173\n';
  t.throws(() => parseConfig(text, { path, env: {} }), {
    code: "ANNAL_CONFIG_SYNTAX",
    file: path,
    line: 3,
    column: 8,
    message: /^\/srv\/annal\.toml:3:8: not valid TOML: /,
  });
});

t.test(
  "[workflows] stickyRuns: 1,000 by default, 0 keeps none, a negative count is refused",
  async (t) => {
    t.equal(parseConfig("[workflows]\n", { path, env: {} }).workflows?.stickyRuns, 1000);
    t.equal(
      parseConfig("[workflows]\nstickyRuns = 0\n", { path, env: {} }).workflows?.stickyRuns,
      0,
    );
    t.throws(() => parseConfig("[workflows]\nstickyRuns = -1\n", { path, env: {} }), {
      code: "ANNAL_CONFIG_INVALID",
      message: /workflows\.stickyRuns/,
    });
  },
);
