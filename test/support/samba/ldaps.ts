import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import { Client } from "ldapts";

/**
 * The host name the DC's certificate names: its subject's CN (`DC1.example.test`), since the
 * certificate Samba generates at its first start has no extensions at all, so no
 * subjectAltName. A client on 127.0.0.1 must be given this name (`servername`) to verify it.
 */
export function certificateHostName(pem: Buffer | string): string {
  const cn = /^CN=(.+)$/m.exec(new X509Certificate(pem).subject)?.[1];
  if (cn === undefined) throw new Error("the DC's certificate names no CN");
  return cn;
}

/**
 * True when `url` answers a simple bind over TLS verified against `caFile` for the name in
 * `certFile`: the DC is up, and it is this one (its CA, its administrator's password), not
 * another server on the same address. False while the files are missing or half written.
 */
export async function answersAsThisDC(target: {
  url: string;
  caFile: string;
  certFile: string;
  bindDN: string;
  password: string;
}): Promise<boolean> {
  let client: Client | undefined;
  try {
    const ca = await readFile(target.caFile);
    const servername = certificateHostName(await readFile(target.certFile));
    client = new Client({
      url: target.url,
      connectTimeout: 2000,
      timeout: 5000,
      tlsOptions: { ca, servername },
    });
    await client.bind(target.bindDN, target.password);
    return true;
  } catch {
    return false;
  } finally {
    await client?.unbind().catch(() => {});
  }
}
