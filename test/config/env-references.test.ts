import t from "tap";
import { parseConfig } from "../../src/config/index.ts";

const path = "/etc/annal/annal.toml";

const directory = (password: string, extra = "") =>
  `[directory]\nurl = "ldap://127.0.0.1:389"\nbindDN = "cn=admin,dc=example,dc=org"\n` +
  `password = "${password}"\nbase = "dc=example,dc=org"\n${extra}`;

t.test("a whole value that is a reference takes the variable's value", async (t) => {
  const config = parseConfig(directory("${LDAP_PASSWORD}"), {
    path,
    env: { LDAP_PASSWORD: "s3cret" },
  });
  t.equal(config.directory?.password, "s3cret");
});

t.test("references inside a string are replaced in place", async (t) => {
  const config = parseConfig(
    '[database]\nurl = "postgres://annal:${PGPASS}@${PGHOST}:5432/annal"\n',
    {
      path,
      env: { PGPASS: "pw", PGHOST: "db.internal" },
    },
  );
  t.equal(config.database.url, "postgres://annal:pw@db.internal:5432/annal");
});

t.test("references are replaced in arrays and arrays of tables", async (t) => {
  const text = directory(
    "${P}",
    '[[directory.types]]\nname = "${TYPE}"\nbase = "ou=${OU},dc=example,dc=org"\n' +
      '[directory.capture]\nredact = ["${EXTRA}"]\n',
  );
  const config = parseConfig(text, {
    path,
    env: { P: "p", TYPE: "user", OU: "people", EXTRA: "carLicense" },
  });
  t.same(config.directory?.types, [
    { name: "user", base: "ou=people,dc=example,dc=org", filter: "(objectClass=*)" },
  ]);
  t.ok(config.directory?.capture.redact.includes("carLicense"));
});

t.test("$${ is a literal ${ and is not looked up", async (t) => {
  const config = parseConfig('[server]\nhost = "$${HOST}"\n', { path, env: { HOST: "nope" } });
  t.equal(config.server.host, "${HOST}");
});

t.test("${NAME:-default} gives the default when NAME is unset or empty", async (t) => {
  const text = directory("${LDAP_PASSWORD:-annal-demo}");
  t.equal(parseConfig(text, { path, env: {} }).directory?.password, "annal-demo");
  t.equal(
    parseConfig(text, { path, env: { LDAP_PASSWORD: "" } }).directory?.password,
    "annal-demo",
  );
  t.equal(parseConfig(text, { path, env: { LDAP_PASSWORD: "set" } }).directory?.password, "set");
});

t.test("a variable set to the empty string is not missing", async (t) => {
  const config = parseConfig('[server]\nhost = "a${EMPTY}b"\n', { path, env: { EMPTY: "" } });
  t.equal(config.server.host, "ab");
});

t.test("a number field accepts a reference whose value is a whole number", async (t) => {
  const config = parseConfig('[database]\npoolSize = "${POOL}"\n', { path, env: { POOL: "25" } });
  t.equal(config.database.poolSize, 25);
});

t.test("a missing variable is named with the key that refers to it", async (t) => {
  t.throws(() => parseConfig(directory("${LDAP_PASSWORD}"), { path, env: {} }), {
    code: "ANNAL_CONFIG_ENV_MISSING",
    keys: ["directory.password"],
    message: /LDAP_PASSWORD \(for directory\.password\)/,
    hint: /LDAP_PASSWORD/,
  });
});

t.test("every missing variable is named at once", async (t) => {
  const text =
    '[database]\nurl = "postgres://u:${PGPASS}@${PGHOST}/db"\n[server]\nhost = "${HOST}"\n';
  t.throws(() => parseConfig(text, { path, env: { PGHOST: "h" } }), {
    code: "ANNAL_CONFIG_ENV_MISSING",
    keys: ["database.url", "server.host"],
    message: /PGPASS \(for database\.url\), HOST \(for server\.host\)/,
  });
});

t.test("a ${ that is not a reference is refused, not passed through", async (t) => {
  for (const host of ["${}", "${1ABC}", "${HOST", "${A B}", "${HOST:default}"]) {
    t.throws(
      () => parseConfig(`[server]\nhost = "${host}"\n`, { path, env: { HOST: "h" } }),
      { code: "ANNAL_CONFIG_INVALID", keys: ["server.host"], hint: /\$\$\{/ },
      host,
    );
  }
});
