import t from "tap";
import { parseConfig } from "../../src/config/index.ts";
import { redactSecrets } from "../../src/logger.ts";

const parse = (toml: string) =>
  parseConfig(toml, {
    path: "/etc/annal/annal.toml",
    cwd: "/srv/annal",
    env: { LDAP_PASSWORD: "p", KEY_PASSPHRASE: "k" },
  });

const directory = (url: string, tls: string) => `[directory]
url = "${url}"
bindDN = "cn=annal,dc=example,dc=org"
password = "\${LDAP_PASSWORD}"
base = "dc=example,dc=org"

[directory.tls]
${tls}`;

t.test("[directory.tls] resolves its files against the configuration's directory", async (t) => {
  const config = parse(
    directory(
      "ldaps://127.0.0.1:636",
      `caFile = "ca.pem"
serverName = "dc1.example.test"
certFile = "/etc/ssl/annal.pem"
keyFile = "annal.key"
keyPassphrase = "\${KEY_PASSPHRASE}"`,
    ),
  );
  t.same(config.directory?.tls, {
    caFile: "/etc/annal/ca.pem",
    serverName: "dc1.example.test",
    startTLS: false,
    certFile: "/etc/ssl/annal.pem",
    keyFile: "/etc/annal/annal.key",
    keyPassphrase: "k",
  });
  t.equal(parse(directory("ldap://127.0.0.1", "")).directory?.tls?.startTLS, false, "off");
  t.equal(parse(directory("ldap://127.0.0.1", "startTLS = true")).directory?.tls?.startTLS, true);
  const none = parse(directory("ldaps://127.0.0.1", "").replace("[directory.tls]", ""));
  t.equal(none.directory?.tls, undefined, "no table, no settings");
});

t.test("[directory.tls] refuses what the URL would leave unused", async (t) => {
  t.throws(() => parse(directory("ldaps://127.0.0.1", "startTLS = true")), {
    code: "ANNAL_CONFIG_INVALID",
    message: /directory\.tls\.startTLS.*StartTLS upgrades an ldap:\/\/ connection/s,
  });
  t.throws(() => parse(directory("ldap://127.0.0.1", 'caFile = "ca.pem"')), {
    code: "ANNAL_CONFIG_INVALID",
    message: /directory\.tls\.caFile.*an ldap:\/\/ connection is not TLS: set startTLS = true/s,
  });
  t.throws(() => parse(directory("ldaps://127.0.0.1", 'certFile = "annal.pem"')), {
    code: "ANNAL_CONFIG_INVALID",
    message: /directory\.tls\.keyFile.*needs both certFile and keyFile/s,
  });
  t.throws(() => parse(directory("ldaps://127.0.0.1", 'serverName = "not a name"')), {
    code: "ANNAL_CONFIG_INVALID",
    message: /directory\.tls\.serverName.*expected a host name/s,
  });
});

t.test("a client key's passphrase is a secret: only an environment reference", async (t) => {
  t.throws(
    () =>
      parse(
        directory(
          "ldaps://127.0.0.1",
          'certFile = "a.pem"\nkeyFile = "a.key"\nkeyPassphrase = "written-in-the-file"',
        ),
      ),
    { code: "ANNAL_CONFIG_SECRET_LITERAL", message: /directory\.tls\.keyPassphrase/ },
  );
});

t.test("a client key's passphrase never reaches a log line", async (t) => {
  const logged = redactSecrets({ directory: { tls: { keyPassphrase: "k", caFile: "ca.pem" } } });
  t.same(logged, { directory: { tls: { keyPassphrase: "[Redacted]", caFile: "ca.pem" } } });
});
