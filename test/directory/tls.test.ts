import t, { type Test } from "tap";
import {
  createDirectoryClient,
  DirectoryError,
  eq,
  type DirectoryClientOptions,
} from "../../src/directory/index.ts";
import { toLdif } from "../../src/slapd/index.ts";
import { testPki } from "../support/certificates.ts";
import { eventually } from "../support/eventually.ts";
import { startSlapd, type Slapd } from "../support/slapd.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";

const PEOPLE = "ou=people,dc=example,dc=org";
const ALICE = `uid=alice,${PEOPLE}`;
const ALICE_PASSWORD = "alice-secret";
// Samba AD's own certificate names `<HOSTNAME>.<realm>` in its CN, with no subjectAltName;
// the directory is reached at 127.0.0.1, so the name to check must be told.
const SERVER_NAME = "dc1.example.test";

const seedLdif = toLdif([
  {
    dn: ALICE,
    attributes: {
      objectClass: ["inetOrgPerson"],
      uid: ["alice"],
      cn: ["Alice"],
      sn: ["Smith"],
      userPassword: [ALICE_PASSWORD],
    },
  },
]);

const pki = await testPki();
t.teardown(() => pki.remove());
const ca = await pki.ca("annal test CA");
const otherCa = await pki.ca("another test CA");
const server = await pki.issue(ca, { commonName: SERVER_NAME });
const slapd = await startSlapd({ seedLdif, tls: { caFile: ca.certFile, ...server } });
t.teardown(() => slapd.stop());

function client(directory: Slapd, options: Partial<DirectoryClientOptions> = {}) {
  const created = createDirectoryClient({
    url: directory.url,
    bindDN: directory.bindDN,
    password: directory.password,
    ...options,
  });
  t.teardown(() => created.close());
  return created;
}

/** The error `promise` fails with, checked to be a `DirectoryError` with `code`. */
async function failure(t: Test, promise: Promise<unknown>, code: string): Promise<DirectoryError> {
  const error = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  t.type(error, DirectoryError, `fails with a DirectoryError (${code})`);
  t.match(error, { code }, code);
  return error as DirectoryError;
}

t.test("ldaps:// with the CA file and the server name connects and reads", async (t) => {
  const directory = client(slapd, {
    url: slapd.ldapsUrl!,
    tls: { caFile: ca.certFile, serverName: SERVER_NAME },
  });
  const alice = await directory.get(ALICE, { attributes: ["cn"] });
  t.same(alice?.attributes.cn, ["Alice"]);
  const found = [];
  for await (const page of directory.search(PEOPLE, { filter: eq("uid", "alice") })) {
    found.push(...page.map((entry) => entry.dn));
  }
  t.same(found, [ALICE], "a search");
  // Sign-in by a bind of the person's own (the directory origin) goes over TLS too.
  t.equal(await directory.checkPassword(ALICE, ALICE_PASSWORD), true, "the right password");
  t.equal(await directory.checkPassword(ALICE, "wrong"), false, "a wrong one");
});

t.test("StartTLS on ldap:// upgrades every connection before the bind", async (t) => {
  const proxy = await startTcpProxy(slapd.url);
  t.teardown(() => proxy.close());
  const directory = client(slapd, {
    url: proxy.url,
    tls: { startTLS: true, caFile: ca.certFile, serverName: SERVER_NAME },
  });
  await directory.modify(ALICE, [{ operation: "replace", attribute: "title", values: "Lead" }]);
  const read = async () => {
    const entries = [];
    for await (const page of directory.search(PEOPLE, { filter: eq("title", "Lead") })) {
      entries.push(...page.map((entry) => entry.dn));
    }
    return entries;
  };
  t.same(await read(), [ALICE], "a search after the upgrade");
  t.equal(await directory.checkPassword(ALICE, ALICE_PASSWORD), true, "a person's own bind");
  // A connection the server dropped is upgraded again before the pool binds it again.
  proxy.killConnections();
  t.same(await read(), [ALICE], "a search on a reconnected connection");

  const wire = proxy.sentByClients().toString("latin1");
  t.ok(wire.includes("1.3.6.1.4.1.1466.20037"), "StartTLS was asked for");
  for (const secret of [slapd.password, ALICE_PASSWORD, slapd.bindDN, "title"]) {
    t.notOk(wire.includes(secret), `${JSON.stringify(secret)} never went out in the clear`);
  }
});

t.test("a watch (a search kept open) is upgraded with StartTLS too", async (t) => {
  const proxy = await startTcpProxy(slapd.url);
  t.teardown(() => proxy.close());
  const directory = client(slapd, {
    url: proxy.url,
    tls: { startTLS: true, caFile: ca.certFile, serverName: SERVER_NAME },
  });
  const stop = new AbortController();
  t.teardown(() => stop.abort());
  let persisting = false;
  const watching = directory.watch("cn=accesslog", {
    scope: "one",
    filter: eq("reqDN", ALICE),
    signal: stop.signal,
    onEntry: () => {},
    onPersisting: () => (persisting = true),
  });
  watching.catch(() => {});
  await eventually(() => persisting, { what: "the watch's search is open" });
  stop.abort();
  t.equal(await watching, undefined);
  const wire = proxy.sentByClients().toString("latin1");
  t.ok(wire.includes("1.3.6.1.4.1.1466.20037"), "StartTLS was asked for");
  for (const clear of [slapd.password, "cn=accesslog", "reqDN"]) {
    t.notOk(wire.includes(clear), `${JSON.stringify(clear)} never went out in the clear`);
  }
});

t.test("a certificate of a CA annal does not trust fails, naming both CAs", async (t) => {
  const directory = client(slapd, {
    url: slapd.ldapsUrl!,
    tls: { caFile: otherCa.certFile, serverName: SERVER_NAME },
  });
  const error = await failure(t, directory.get(ALICE), "ANNAL_LDAP_TLS_FAILED");
  t.equal(error.status, 502);
  t.match(
    error.message,
    `(CN=${SERVER_NAME}) was issued by CN=annal test CA, a certificate authority annal does not trust`,
  );
  t.match(error.message, `only the CAs in ${otherCa.certFile} (CN=another test CA)`);
  t.match(error.message, /\((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\)$/);
  t.match(
    error.hint,
    "set [directory.tls] caFile to a PEM file that holds the certificate of CN=annal test CA",
  );
  t.notMatch(error.message, /cannot reach/);
});

t.test("a certificate that does not name the host fails, naming the names", async (t) => {
  const unnamed = client(slapd, { url: slapd.ldapsUrl!, tls: { caFile: ca.certFile } });
  const error = await failure(t, unnamed.get(ALICE), "ANNAL_LDAP_TLS_FAILED");
  t.match(
    error.message,
    `(CN=${SERVER_NAME}) does not name 127.0.0.1, the name annal checks: it names only ${SERVER_NAME}, its subject's CN (it has no subjectAltName) (ERR_TLS_CERT_ALTNAME_INVALID)`,
  );
  t.match(error.hint, `set [directory.tls] serverName = "${SERVER_NAME}"`);

  const misnamed = client(slapd, {
    tls: { startTLS: true, caFile: ca.certFile, serverName: "dc2.example.test" },
  });
  const startTLS = await failure(t, misnamed.get(ALICE), "ANNAL_LDAP_TLS_FAILED");
  t.match(startTLS.message, "does not name dc2.example.test", "with StartTLS too");
  t.equal(
    await misnamed.checkPassword(ALICE, ALICE_PASSWORD).catch((e: DirectoryError) => e.code),
    "ANNAL_LDAP_TLS_FAILED",
    "a person's bind is refused too, before the password is sent",
  );
});

t.test("ldaps:// without TLS settings, behind a private CA, fails as TLS", async (t) => {
  const directory = client(slapd, { url: slapd.ldapsUrl! });
  const error = await failure(t, directory.get(ALICE), "ANNAL_LDAP_TLS_FAILED");
  t.match(error.message, "a certificate authority annal does not trust");
  t.match(error.message, "annal trusts the CAs Node.js and this system trust");
  t.match(error.hint, "set [directory.tls] caFile");
  t.notMatch(error.message, /cannot reach/);
});

t.test("an expired certificate fails, saying when it expired", async (t) => {
  const expired = await pki.issue(ca, {
    commonName: SERVER_NAME,
    validity: { from: "20200101000000Z", to: "20200102000000Z" },
  });
  const old = await startSlapd({ tls: { caFile: ca.certFile, ...expired } });
  t.teardown(() => old.stop());
  const directory = client(old, {
    url: old.ldapsUrl!,
    tls: { caFile: ca.certFile, serverName: SERVER_NAME },
  });
  const error = await failure(t, directory.get(ALICE), "ANNAL_LDAP_TLS_FAILED");
  t.match(
    error.message,
    `(CN=${SERVER_NAME}) expired on Jan  2 00:00:00 2020 GMT (CERT_HAS_EXPIRED)`,
  );
  t.match(error.hint, "renew the directory's certificate");
});

t.test("StartTLS to a directory without TLS fails: it refused StartTLS", async (t) => {
  const plain = await startSlapd();
  t.teardown(() => plain.stop());
  const directory = client(plain, { tls: { startTLS: true, caFile: ca.certFile } });
  const error = await failure(t, directory.get(ALICE), "ANNAL_LDAP_TLS_FAILED");
  t.match(error.message, `the directory at ${plain.url} refused StartTLS: `);
  t.match(error.hint, "ldaps://");
});

t.test("ldaps:// to a port that takes ldap:// fails as TLS, with a hint on ports", async (t) => {
  const url = slapd.url.replace(/^ldap:/, "ldaps:");
  const directory = client(slapd, { url, tls: { caFile: ca.certFile } });
  const error = await failure(t, directory.get(ALICE), "ANNAL_LDAP_TLS_FAILED");
  t.match(error.message, `the directory at ${url} ended the connection during the TLS handshake`);
  t.match(error.hint, "startTLS = true");
});

t.test("a directory that requires a client certificate is shown annal's", async (t) => {
  const passphrase = "client key passphrase";
  const annal = await pki.issue(ca, { commonName: "annal", purpose: "client", passphrase });
  const demanding = await startSlapd({
    seedLdif,
    tls: { caFile: ca.certFile, ...server, verifyClient: "demand" },
  });
  t.teardown(() => demanding.stop());
  const tls = { caFile: ca.certFile, serverName: SERVER_NAME };
  const url = demanding.ldapsUrl!;

  const shown = client(demanding, {
    url,
    tls: { ...tls, certFile: annal.certFile, keyFile: annal.keyFile, keyPassphrase: passphrase },
  });
  t.ok(await shown.get(ALICE), "with its certificate, annal reads");

  // Over TLS 1.3 the server checks the client's certificate after the handshake, and closes.
  const without = client(demanding, { url, tls });
  const error = await failure(t, without.get(ALICE), "ANNAL_LDAP_UNAVAILABLE");
  t.match(error.message, `the directory at ${url} closed the TLS connection without answering`);
  t.match(
    error.hint,
    "if it requires a client certificate, set [directory.tls] certFile and keyFile",
  );

  const opening = () =>
    createDirectoryClient({
      url,
      bindDN: demanding.bindDN,
      password: demanding.password,
      tls: {
        ...tls,
        certFile: annal.certFile,
        keyFile: annal.keyFile,
        keyPassphrase: "not-the-passphrase-42",
      },
    });
  const wrong = await failure(t, Promise.resolve().then(opening), "ANNAL_LDAP_TLS_FAILED");
  t.match(
    wrong.message,
    `the client certificate ${annal.certFile} and key ${annal.keyFile} cannot be used`,
  );
  t.notMatch(
    JSON.stringify({ ...wrong, message: wrong.message }),
    "not-the-passphrase-42",
    "no passphrase in it",
  );
});
