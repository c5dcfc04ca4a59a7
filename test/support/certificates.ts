import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A certificate authority of a test's own: its certificate names it `CN=<name>`. */
export interface TestCA {
  readonly name: string;
  /** PEM of the CA's certificate: what a client is told to trust. */
  readonly certFile: string;
  readonly keyFile: string;
}

/** A certificate and its key (PEM), issued by a `TestCA`. */
export interface TestCertificate {
  readonly certFile: string;
  readonly keyFile: string;
}

/**
 * Certificates made with Debian's `openssl` in a temporary directory of their own, removed by
 * `remove()`: the CAs and server and client certificates a TLS test needs, on P-256 keys (fast
 * to make).
 *
 * @example
 * const pki = await testPki();
 * t.teardown(() => pki.remove());
 * const ca = await pki.ca("annal test CA");
 * const server = await pki.issue(ca, { commonName: "dc1.example.test" });
 */
export async function testPki(): Promise<{
  readonly dir: string;
  ca(name: string): Promise<TestCA>;
  /**
   * A certificate for `commonName`, for a server (the default) or a client. Without `dnsNames`
   * it has no subjectAltName, as Samba AD's own certificate: a client then checks the name
   * against the CN. `validity` dates (`YYYYMMDDHHMMSSZ`) make one that is expired or not yet
   * valid; the default is valid from now for a day. `passphrase` encrypts its key.
   */
  issue(
    ca: TestCA,
    options: {
      commonName: string;
      dnsNames?: readonly string[];
      purpose?: "server" | "client";
      validity?: { readonly from: string; readonly to: string };
      passphrase?: string;
    },
  ): Promise<TestCertificate>;
  remove(): Promise<void>;
}> {
  const dir = await mkdtemp(join(tmpdir(), "annal-pki-"));
  let serial = 1;
  const file = (name: string) => join(dir, name.replace(/[^A-Za-z0-9.-]+/g, "-"));
  const newKey = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"];
  return {
    dir,
    async ca(name) {
      const certFile = file(`${name}.ca.pem`);
      const keyFile = file(`${name}.ca.key`);
      await run("openssl", [
        ...["req", "-x509", ...newKey, "-nodes", "-days", "2"],
        ...["-subj", `/CN=${name}`, "-keyout", keyFile, "-out", certFile],
        ...["-addext", "basicConstraints=critical,CA:TRUE"],
        ...["-addext", "keyUsage=critical,keyCertSign,cRLSign"],
      ]);
      return { name, certFile, keyFile };
    },
    async issue(ca, options) {
      const id = `${options.commonName}.${serial++}`;
      const certFile = file(`${id}.pem`);
      const keyFile = file(`${id}.key`);
      const request = file(`${id}.csr`);
      const extensions = file(`${id}.ext`);
      const purpose = options.purpose ?? "server";
      await writeFile(
        extensions,
        [
          "basicConstraints=critical,CA:FALSE",
          "keyUsage=critical,digitalSignature,keyEncipherment",
          `extendedKeyUsage=${purpose === "server" ? "serverAuth" : "clientAuth"}`,
          ...(options.dnsNames?.length
            ? [`subjectAltName=${options.dnsNames.map((name) => `DNS:${name}`).join(",")}`]
            : []),
          "",
        ].join("\n"),
      );
      const keyProtection =
        options.passphrase === undefined ? ["-nodes"] : ["-passout", `pass:${options.passphrase}`];
      await run("openssl", [
        ...["req", "-new", ...newKey, ...keyProtection],
        ...["-subj", `/CN=${options.commonName}`, "-keyout", keyFile, "-out", request],
      ]);
      if (options.validity === undefined) {
        await run("openssl", [
          ...["x509", "-req", "-in", request, "-CA", ca.certFile, "-CAkey", ca.keyFile],
          ...["-set_serial", String(serial), "-days", "1", "-extfile", extensions],
          ...["-out", certFile],
        ]);
      } else {
        // `openssl x509` (3.0) signs from now only; `openssl ca` takes both dates.
        await issueWithDates(dir, ca, { request, extensions, certFile, ...options.validity });
      }
      return { certFile, keyFile };
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

async function issueWithDates(
  dir: string,
  ca: TestCA,
  at: { request: string; extensions: string; certFile: string; from: string; to: string },
): Promise<void> {
  const database = join(dir, "ca-index.txt");
  const serial = join(dir, "ca-serial");
  const config = join(dir, "ca.cnf");
  await writeFile(database, "", { flag: "a" });
  await writeFile(serial, `${randomBytes(8).toString("hex")}\n`);
  await writeFile(
    config,
    [
      "[ca]",
      "default_ca = test",
      "[test]",
      `database = ${database}`,
      `new_certs_dir = ${dir}`,
      `serial = ${serial}`,
      "default_md = sha256",
      "policy = anything",
      "unique_subject = no",
      "[anything]",
      "commonName = supplied",
      "",
    ].join("\n"),
  );
  await run("openssl", [
    ...["ca", "-batch", "-notext", "-config", config],
    ...["-cert", ca.certFile, "-keyfile", ca.keyFile, "-in", at.request, "-out", at.certFile],
    ...["-startdate", at.from, "-enddate", at.to, "-extfile", at.extensions],
  ]);
}
