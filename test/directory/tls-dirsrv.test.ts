import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import t, { type Test } from "tap";
import { Attribute, Change, Client } from "ldapts";
import {
  createDirectoryClient,
  DirectoryError,
  type DirectoryClientOptions,
} from "../../src/directory/index.ts";
import { freePort } from "../../src/ports.ts";
import { testPki, type TestCA, type TestCertificate } from "../support/certificates.ts";
import { startDirsrv, type Dirsrv } from "../support/dirsrv.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";

const run = promisify(execFile);
const SERVER_NAME = "dc1.example.test";

/**
 * A 389 Directory Server that offers `ldaps://` and StartTLS with `certificate`: 389 keeps its
 * certificates in an NSS database in its configuration directory (the CA trusted, the server's
 * certificate and key as `Server-Cert`, which `cn=RSA,cn=encryption,cn=config` names), and
 * turns TLS on (`nsslapd-security`) only at start, so the instance is restarted on it.
 */
async function startDirsrvWithTls(
  ca: TestCA,
  certificate: TestCertificate,
  scratch: string,
): Promise<{ ds: Dirsrv; ldapsUrl: string }> {
  const ds = await startDirsrv();
  t.teardown(() => ds.stop());
  const nss = `sql:${join(ds.dataDir, "config")}`;
  const p12 = join(scratch, "server-cert.p12");
  await run("openssl", [
    ...["pkcs12", "-export", "-name", "Server-Cert", "-passout", "pass:", "-out", p12],
    ...["-in", certificate.certFile, "-inkey", certificate.keyFile],
  ]);
  await run("certutil", ["-N", "-d", nss, "--empty-password"]);
  await run("certutil", ["-A", "-d", nss, "-n", ca.name, "-t", "CT,,", "-a", "-i", ca.certFile]);
  await run("pk12util", ["-i", p12, "-d", nss, "-W", ""]);
  const securePort = await freePort();
  const admin = new Client({ url: ds.url });
  try {
    await admin.bind(ds.bindDN, ds.password);
    const replace = (type: string, value: string) =>
      new Change({ operation: "replace", modification: new Attribute({ type, values: [value] }) });
    await admin.modify("cn=config", [
      replace("nsslapd-security", "on"),
      replace("nsslapd-securePort", String(securePort)),
    ]);
  } finally {
    await admin.unbind();
  }
  await ds.restart();
  return { ds, ldapsUrl: `ldaps://127.0.0.1:${securePort}/` };
}

const pki = await testPki();
t.teardown(() => pki.remove());
const ca = await pki.ca("annal test CA");
const otherCa = await pki.ca("another test CA");
const server = await pki.issue(ca, { commonName: SERVER_NAME });
const { ds, ldapsUrl } = await startDirsrvWithTls(ca, server, pki.dir);

function client(options: Partial<DirectoryClientOptions>) {
  const created = createDirectoryClient({
    url: ds.url,
    bindDN: ds.bindDN,
    password: ds.password,
    ...options,
  });
  t.teardown(() => created.close());
  return created;
}

async function tlsFailure(t: Test, promise: Promise<unknown>): Promise<DirectoryError> {
  const error = await promise.then(
    () => undefined,
    (error: unknown) => error,
  );
  t.type(error, DirectoryError);
  t.match(error, { code: "ANNAL_LDAP_TLS_FAILED", status: 502 });
  return error as DirectoryError;
}

t.test("389: ldaps:// with the CA file and the server name connects and reads", async (t) => {
  const directory = client({
    url: ldapsUrl,
    tls: { caFile: ca.certFile, serverName: SERVER_NAME },
  });
  t.equal((await directory.get(ds.base))?.dn, ds.base);
});

t.test("389: StartTLS on ldap:// connects and reads, nothing in the clear", async (t) => {
  const proxy = await startTcpProxy(ds.url);
  t.teardown(() => proxy.close());
  const directory = client({
    url: proxy.url,
    tls: { startTLS: true, caFile: ca.certFile, serverName: SERVER_NAME },
  });
  const found = [];
  for await (const page of directory.search(ds.base, { scope: "one" })) found.push(...page);
  t.ok(found.length >= 3, "the suffix's ous");
  const wire = proxy.sentByClients().toString("latin1");
  t.ok(wire.includes("1.3.6.1.4.1.1466.20037"), "StartTLS was asked for");
  for (const clear of [ds.password, ds.bindDN, ds.base]) {
    t.notOk(wire.includes(clear), `${JSON.stringify(clear)} never went out in the clear`);
  }
});

t.test(
  "389: a CA annal does not trust, a name the certificate lacks, no TLS settings",
  async (t) => {
    const untrusted = await tlsFailure(
      t,
      client({ url: ldapsUrl, tls: { caFile: otherCa.certFile, serverName: SERVER_NAME } }).get(
        ds.base,
      ),
    );
    t.match(
      untrusted.message,
      `(CN=${SERVER_NAME}) was issued by CN=annal test CA, a certificate authority annal does not trust: annal trusts only the CAs in ${otherCa.certFile} (CN=another test CA)`,
    );
    const unnamed = await tlsFailure(
      t,
      client({ url: ldapsUrl, tls: { caFile: ca.certFile } }).get(ds.base),
    );
    t.match(
      unnamed.message,
      `does not name 127.0.0.1, the name annal checks: it names only ${SERVER_NAME}`,
    );
    const bare = await tlsFailure(t, client({ url: ldapsUrl }).get(ds.base));
    t.match(bare.message, "a certificate authority annal does not trust");
  },
);
