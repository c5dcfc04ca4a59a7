import t from "tap";
import { parseConfig } from "../../src/config/index.ts";

const parse = (toml: string, env: Record<string, string> = { SECRET: "s3cret" }) =>
  parseConfig(toml, { path: "annal.toml", env });

t.test("[auth] and [authorization] default to sign-in off and nothing activated", async (t) => {
  const config = parse("");
  t.equal(config.auth.maxPrincipals, 7_000);
  t.same(config.auth.rateLimit, { perAccount: 5, perAddress: 100, window: 15 * 60_000 });
  t.equal(config.auth.principalsRefresh, 15 * 60_000);
  t.same(config.auth.session, { idleTimeout: 2 * 3_600_000, absoluteTimeout: 12 * 3_600_000 });
  t.equal(config.auth.oidc, undefined);
  t.equal(config.auth.ldap, undefined);
  t.same(config.authorization, { grants: {} });
  t.equal(config.server.publicUrl, undefined);
});

t.test("[auth.oidc] takes its client secret only as an environment reference", async (t) => {
  const oidc = (secret: string) => `[auth.oidc]
issuer = "https://login.example.org"
clientId = "annal"
clientSecret = ${secret}`;
  t.equal(parse(oidc('"${SECRET}"')).auth.oidc?.clientSecret, "s3cret");
  t.throws(() => parse(oidc('"s3cret"')), { code: "ANNAL_CONFIG_SECRET_LITERAL" });
  const full = parse(`${oidc('"${SECRET}"')}
origin = "staff"
groupsClaim = "memberOf"
scopes = ["openid", "groups"]`);
  t.match(full.auth.oidc, {
    origin: "staff",
    groupsClaim: "memberOf",
    scopes: ["openid", "groups"],
  });
  t.throws(() => parse(`${oidc('"${SECRET}"')}\norigin = "service"`), {
    code: "ANNAL_CONFIG_INVALID",
    message: /service accounts' origin/,
  });
  t.throws(
    () => parse(`${oidc('"${SECRET}"')}\n[auth.oidc.demo]\nport = 4174`),
    { message: /expected http:\/\/127\.0\.0\.1:4174/ },
    "the demo provider's issuer is where it listens",
  );
});

t.test("[auth.ldap], [server] publicUrl and [authorization]", async (t) => {
  const config = parse(`[server]
publicUrl = "https://annal.example.org/"

[auth.ldap]
userFilter = "(|(uid={login})(mail={login}))"

[authorization.grants]
operator = ["cn=ops,ou=groups,dc=example,dc=org"]
"approve-leave" = ["service:hr"]

[authorization.activate]
version = 3
by = "jane"`);
  t.equal(config.server.publicUrl, "https://annal.example.org");
  t.match(config.auth.ldap, { origin: "directory", userFilter: "(|(uid={login})(mail={login}))" });
  t.same(config.authorization.activate, { version: 3, by: "jane" });
  t.throws(() => parse(`[auth.ldap]\nuserFilter = "(uid=x)"`), { message: /\{login\}/ });
  t.throws(() => parse(`[authorization.grants]\n"Bad Name" = []`), {
    code: "ANNAL_CONFIG_INVALID",
  });
  t.throws(() => parse(`[authorization.activate]\nversion = 1`), { message: /by is required/ });
});

t.test(
  "[auth.oidc] refuses an http:// issuer off loopback unless allowInsecureIssuer",
  async (t) => {
    const oidc = (issuer: string, extra = "") => `[auth.oidc]
issuer = "${issuer}"
clientId = "annal"
clientSecret = "\${SECRET}"
${extra}`;
    t.throws(() => parse(oidc("http://login.example.org")), {
      code: "ANNAL_CONFIG_INVALID",
      message:
        /expected an https:\/\/ issuer \(http:\/\/ only on loopback, or with allowInsecureIssuer = true\)/,
    });
    t.throws(() => parse(oidc("http://10.0.0.7:8080/realms/staff")), {
      code: "ANNAL_CONFIG_INVALID",
    });
    t.equal(
      parse(oidc("http://login.example.org", "allowInsecureIssuer = true")).auth.oidc?.issuer,
      "http://login.example.org",
      "an explicit opt-in",
    );
    for (const loopback of [
      "http://127.0.0.1:4174",
      "http://localhost:8080",
      "http://[::1]:9000",
    ]) {
      t.equal(parse(oidc(loopback)).auth.oidc?.allowInsecureIssuer, false, loopback);
    }
    t.ok(parse(oidc("https://login.example.org")).auth.oidc, "https needs nothing");
    t.throws(() => parse(oidc("https://login.example.org", 'allowInsecureIssuer = "yes"')), {
      message: /allowInsecureIssuer.*expected true or false/s,
    });
  },
);

t.test("[auth.oidc] tokenEndpointAuthMethod and the client secret agree", async (t) => {
  const oidc = (lines: string) => `[auth.oidc]
issuer = "https://login.example.org"
clientId = "annal"
${lines}`;
  t.equal(parse(oidc('clientSecret = "${SECRET}"')).auth.oidc?.tokenEndpointAuthMethod, undefined);
  for (const method of ["client_secret_basic", "client_secret_post"]) {
    const config = parse(
      oidc(`clientSecret = "\${SECRET}"\ntokenEndpointAuthMethod = "${method}"`),
    );
    t.equal(config.auth.oidc?.tokenEndpointAuthMethod, method);
    t.throws(() => parse(oidc(`tokenEndpointAuthMethod = "${method}"`)), {
      code: "ANNAL_CONFIG_INVALID",
      message: new RegExp(
        `clientSecret.*expected a clientSecret with tokenEndpointAuthMethod = "${method}"`,
        "s",
      ),
    });
  }
  t.match(parse(oidc('tokenEndpointAuthMethod = "none"')).auth.oidc, {
    tokenEndpointAuthMethod: "none",
    clientSecret: undefined,
  });
  t.equal(parse(oidc("")).auth.oidc?.clientSecret, undefined, "a public client by default");
  t.throws(() => parse(oidc('clientSecret = "${SECRET}"\ntokenEndpointAuthMethod = "none"')), {
    message: /a public client .* sends no secret/,
  });
  t.throws(
    () => parse(oidc('clientSecret = "${SECRET}"\ntokenEndpointAuthMethod = "private_key_jwt"')),
    {
      message: /expected one of client_secret_basic, client_secret_post, none/,
    },
  );
});
