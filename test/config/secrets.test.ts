import t from "tap";
import { parseConfig } from "../../src/config/index.ts";

const path = "annal.toml";

const directory = (passwordLine: string) =>
  `[directory]\nurl = "ldap://127.0.0.1:389"\nbindDN = "cn=admin,dc=example,dc=org"\n` +
  `${passwordLine}\nbase = "dc=example,dc=org"\n`;

t.test("a literal directory.password is refused and its value is not repeated", async (t) => {
  const error = t.throws(() =>
    parseConfig(directory('password = "hunter2-literal"'), { path, env: {} }),
  );
  t.match(error, {
    code: "ANNAL_CONFIG_SECRET_LITERAL",
    keys: ["directory.password"],
    message: /directory\.password/,
    hint: /\$\{LDAP_PASSWORD\}/,
  });
  t.notMatch(
    JSON.stringify({ ...(error as object), message: (error as Error).message }),
    "hunter2",
  );
});

t.test("the literal check runs before references are replaced", async (t) => {
  // Even when the environment has every variable, a literal is a literal.
  t.throws(() => parseConfig(directory('password = "hunter2"'), { path, env: { hunter2: "x" } }), {
    code: "ANNAL_CONFIG_SECRET_LITERAL",
  });
  // ... and a reference to a missing variable is reported as missing, not as a literal.
  t.throws(() => parseConfig(directory('password = "${LDAP_PASSWORD}"'), { path, env: {} }), {
    code: "ANNAL_CONFIG_ENV_MISSING",
  });
});

t.test("a password that only contains a reference is still a literal", async (t) => {
  for (const line of [
    'password = "prefix-${LDAP_PASSWORD}"',
    'password = "$${LDAP_PASSWORD}"',
    'password = ""',
    "password = 12345",
  ]) {
    t.throws(
      () => parseConfig(directory(line), { path, env: { LDAP_PASSWORD: "x" } }),
      { code: "ANNAL_CONFIG_SECRET_LITERAL", keys: ["directory.password"] },
      line,
    );
  }
});

t.test("secret keys are found at any depth, inside arrays of tables too", async (t) => {
  const text =
    '[[rest]]\nname = "a"\npassword = "${A_PASSWORD}"\n' +
    '[[rest]]\nname = "b"\npassword = "plain-text-b"\n' +
    '[auth.oidc]\nclientSecret = "plain-text-c"\n';
  const error = t.throws(() => parseConfig(text, { path, env: {} }));
  t.match(error, {
    code: "ANNAL_CONFIG_SECRET_LITERAL",
    keys: ["rest[1].password", "auth.oidc.clientSecret"],
  });
  t.notMatch((error as Error).message, /plain-text/);
});

t.test("a secret in a syntax error is not shown in the message", async (t) => {
  const text = directory('password = "hunter2" junk');
  const error = t.throws(() => parseConfig(text, { path, env: {} }));
  t.match(error, { code: "ANNAL_CONFIG_SYNTAX" });
  t.notMatch((error as Error).message, /hunter2/);
  t.equal((error as Error).cause, undefined);
});

t.test("a secret from the environment is not shown when the value is invalid", async (t) => {
  const error = t.throws(() =>
    parseConfig('[database]\nurl = "${DB}"\n', { path, env: { DB: "mysql://u:topsecret@h/db" } }),
  );
  t.match(error, { code: "ANNAL_CONFIG_INVALID", keys: ["database.url"] });
  t.notMatch((error as Error).message, /topsecret/);
});
