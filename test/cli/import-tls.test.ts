import { writeFile } from "node:fs/promises";
import path from "node:path";
import t, { type Test } from "tap";
import { testPki } from "../support/certificates.ts";
import { peopleLdif } from "../support/capture.ts";
import { testDatabase } from "../support/postgres.ts";
import { startSlapd } from "../support/slapd.ts";
import { runAnnal } from "./support.ts";

// What `annal start` builds its directory client from is what `annal import` builds it from:
// `[directory.tls]` reaches the connections, and a certificate that does not verify is said.
const pki = await testPki();
t.teardown(() => pki.remove());
const ca = await pki.ca("annal test CA");
const otherCa = await pki.ca("another test CA");
const server = await pki.issue(ca, { commonName: "dc1.example.test" });
const slapd = await startSlapd({
  seedLdif: peopleLdif(3),
  tls: { caFile: ca.certFile, ...server },
});
t.teardown(() => slapd.stop());

async function importWith(t: Test, tls: string) {
  const db = await testDatabase(t);
  const file = path.join(t.testdir(), "annal.toml");
  await writeFile(
    file,
    `[database]
url = "${db.url}"

[directory]
url = "${slapd.ldapsUrl}"
bindDN = "${slapd.bindDN}"
password = "\${LDAP_PASSWORD}"
base = "dc=example,dc=org"

[directory.tls]
${tls}
`,
  );
  return runAnnal(["import", "--config", file], { env: { LDAP_PASSWORD: slapd.password } });
}

t.test("annal import reads the directory over ldaps:// with [directory.tls]", async (t) => {
  const run = await importWith(t, `caFile = "${ca.certFile}"\nserverName = "dc1.example.test"`);
  t.equal(run.code, 0, run.stderr);
  t.match(run.stdout, /^imported 7 entries in [\d.]+ s\n$/, "the base, its ous, 3 people");
});

t.test("a certificate of another CA stops annal import with ANNAL_LDAP_TLS_FAILED", async (t) => {
  const run = await importWith(
    t,
    `caFile = "${otherCa.certFile}"\nserverName = "dc1.example.test"`,
  );
  t.equal(run.code, 1);
  t.match(
    run.stderr,
    "annal: ANNAL_LDAP_TLS_FAILED: the directory's certificate at " +
      `${slapd.ldapsUrl} (CN=dc1.example.test) was issued by CN=annal test CA, ` +
      "a certificate authority annal does not trust",
  );
  t.match(run.stderr, "annal: hint: set [directory.tls] caFile");
  t.notMatch(run.stderr, /could not be reached|cannot reach/);
});
