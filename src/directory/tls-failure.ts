import type { DetailedPeerCertificate, PeerCertificate } from "node:tls";

/** How annal's connections to a directory use TLS: what a failure's message refers to. */
export interface TlsSettings {
  readonly url: string;
  /** StartTLS on an `ldap://` URL; otherwise the URL is `ldaps://`. */
  readonly startTLS: boolean;
  /** The file of the only CAs trusted; undefined: the CAs Node.js and the system trust. */
  readonly caFile: string | undefined;
  /** The subjects of the CAs in `caFile`, as `CN=…` text. */
  readonly trustedCAs: readonly string[];
  /** The name the certificate must carry: `serverName`, else the URL's host. */
  readonly checkedName: string;
  readonly clientCertificate: boolean;
}

/** A failure of TLS put in words: what did not work, and what to do. */
export interface TlsFailureReading {
  readonly message: string;
  readonly hint: string;
}

/** The directory refused the StartTLS extended operation (RFC 4511 §4.14). */
export class StartTLSRefusedError extends Error {
  readonly resultCode: number;

  constructor(resultCode: number, diagnostic: string) {
    super(diagnostic.trim());
    this.name = "StartTLSRefusedError";
    this.resultCode = resultCode;
  }
}

// The certificate each failed handshake was shown, keyed by the error it failed with: Node's
// verification errors (an unknown CA, an expired certificate) do not carry it.
const shownCertificates = new WeakMap<Error, DetailedPeerCertificate>();

/** Keeps the certificate a handshake was shown, for the message of the error it failed with. */
export function rememberShownCertificate(error: Error, certificate: DetailedPeerCertificate): void {
  shownCertificates.set(error, certificate);
}

/** OpenSSL's verification results as Node.js names them (`X509_V_ERR_*` without the prefix). */
const VERIFY_CODES = new Set([
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_CRL",
  "UNABLE_TO_DECRYPT_CERT_SIGNATURE",
  "UNABLE_TO_DECRYPT_CRL_SIGNATURE",
  "UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY",
  "CERT_SIGNATURE_FAILURE",
  "CRL_SIGNATURE_FAILURE",
  "CERT_NOT_YET_VALID",
  "CERT_HAS_EXPIRED",
  "CRL_NOT_YET_VALID",
  "CRL_HAS_EXPIRED",
  "ERROR_IN_CERT_NOT_BEFORE_FIELD",
  "ERROR_IN_CERT_NOT_AFTER_FIELD",
  "ERROR_IN_CRL_LAST_UPDATE_FIELD",
  "ERROR_IN_CRL_NEXT_UPDATE_FIELD",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "CERT_CHAIN_TOO_LONG",
  "CERT_REVOKED",
  "INVALID_CA",
  "PATH_LENGTH_EXCEEDED",
  "INVALID_PURPOSE",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "HOSTNAME_MISMATCH",
  "IP_ADDRESS_MISMATCH",
]);

/** The certificate was issued by a CA annal does not trust (or by none at all). */
const UNTRUSTED_ISSUER = new Set([
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "CERT_UNTRUSTED",
]);

// Node's message when the server closes the connection before the handshake completes: a
// plain `ldap://` port spoken to in TLS, or a server that refuses the client's certificate.
const HANDSHAKE_CUT = /before secure TLS connection was established/;

function codeOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * Whether `error` is a failure to set up TLS with the directory: its certificate did not verify,
 * the handshake failed or was cut off, or the directory refused StartTLS. Another connection
 * would fail the same way, so such a failure is not retried.
 */
export function isTlsFailure(error: unknown): boolean {
  if (error instanceof StartTLSRefusedError) return true;
  if (!(error instanceof Error)) return false;
  const code = codeOf(error);
  if (code !== undefined && (VERIFY_CODES.has(code) || /^ERR_(TLS|SSL)_/.test(code))) return true;
  return HANDSHAKE_CUT.test(error.message);
}

/** `CN=dc1.example.test, O=Example` of a certificate's subject or issuer. */
function distinguishedName(name: PeerCertificate["subject"] | undefined): string {
  if (name === undefined) return "an unnamed subject";
  const parts = Object.entries(name).flatMap(([key, value]) =>
    (Array.isArray(value) ? value : [value]).map((item) => `${key}=${String(item)}`),
  );
  return parts.length > 0 ? parts.reverse().join(", ") : "an unnamed subject";
}

/** The certificates a server showed, its own first, up to the last one it sent (or the root). */
function chainOf(certificate: DetailedPeerCertificate): DetailedPeerCertificate[] {
  const chain = [certificate];
  let at = certificate;
  while (at.issuerCertificate && at.issuerCertificate !== at && chain.length < 10) {
    at = at.issuerCertificate;
    chain.push(at);
  }
  return chain;
}

/** What a certificate names: its subjectAltName entries, else its subject's CN. */
function namesOf(certificate: PeerCertificate): { described: string; dnsName?: string } {
  const alt = (certificate.subjectaltname ?? "")
    .split(/,\s*/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  const dnsNames = alt.filter((entry) => entry.startsWith("DNS:")).map((entry) => entry.slice(4));
  const dnsName = dnsNames.find((name) => !name.includes("*"));
  if (alt.length > 0) {
    const names = alt.map((entry) => entry.replace(/^(DNS|IP Address):/, ""));
    return { described: names.join(", "), ...(dnsName ? { dnsName } : {}) };
  }
  const cn = certificate.subject?.CN;
  const common = Array.isArray(cn) ? cn.join(", ") : cn;
  if (common === undefined || common === "") return { described: "no name at all" };
  return {
    described: `only ${common}, its subject's CN (it has no subjectAltName)`,
    ...(/^[A-Za-z0-9.-]+$/.test(common) ? { dnsName: common } : {}),
  };
}

function trustedText(settings: TlsSettings): string {
  if (settings.caFile === undefined) return "the CAs Node.js and this system trust";
  const subjects = settings.trustedCAs.join("; ");
  return `only the CAs in ${settings.caFile}${subjects ? ` (${subjects})` : ""}`;
}

/**
 * Puts a TLS failure with the directory in words: what did not match (the name the
 * certificate carries, the CA that issued it, its dates), with Node's code, and what to set.
 */
export function readTlsFailure(error: unknown, settings: TlsSettings): TlsFailureReading {
  const { url } = settings;
  if (error instanceof StartTLSRefusedError) {
    return {
      message: `the directory at ${url} refused StartTLS: ${error.message || `result code ${error.resultCode}`}`,
      hint: "set up TLS (a certificate) on the directory, or use its ldaps:// URL without [directory.tls] startTLS",
    };
  }
  const code = codeOf(error) ?? "";
  const text = error instanceof Error ? error.message : String(error);
  const shown =
    error instanceof Error
      ? (shownCertificates.get(error) ??
        ((error as { cert?: DetailedPeerCertificate }).cert || undefined))
      : undefined;
  const chain = shown ? chainOf(shown) : [];
  const leaf = chain[0];
  const certificate = leaf
    ? `the directory's certificate at ${url} (${distinguishedName(leaf.subject)})`
    : `the directory's certificate at ${url}`;

  if (code === "ERR_TLS_CERT_ALTNAME_INVALID" || code === "HOSTNAME_MISMATCH") {
    const checked = (error as { host?: string }).host ?? settings.checkedName;
    const names = leaf ? namesOf(leaf) : undefined;
    return {
      message: `${certificate} does not name ${checked}, the name annal checks: it names ${names?.described ?? "other names"} (${code})`,
      hint: names?.dnsName
        ? `set [directory.tls] serverName = "${names.dnsName}", a name the certificate carries, or reach the directory by that name in [directory] url`
        : `give the directory a certificate that names ${checked}`,
    };
  }
  if (UNTRUSTED_ISSUER.has(code)) {
    const issuer = leaf ? distinguishedName(leaf.issuer) : undefined;
    const top = chain.at(-1);
    const root = top && top !== leaf ? distinguishedName(top.issuer) : issuer;
    const under = root && root !== issuer ? ` (under ${root})` : "";
    return {
      message: `${certificate} was issued by ${issuer ?? "a CA"}${under}, a certificate authority annal does not trust: annal trusts ${trustedText(settings)} (${code})`,
      hint:
        settings.caFile === undefined
          ? `set [directory.tls] caFile to a PEM file that holds the certificate of ${root ?? "the CA that issued the directory's certificate"}`
          : `set [directory.tls] caFile to a PEM file that holds the certificate of ${root ?? "the CA that issued the directory's certificate"}, or add it to ${settings.caFile}`,
    };
  }
  if (code === "DEPTH_ZERO_SELF_SIGNED_CERT") {
    return {
      message: `${certificate} is self-signed, and annal does not trust it: annal trusts ${trustedText(settings)} (${code})`,
      hint: "give the directory a certificate issued by your CA, or put this certificate itself in the file of [directory.tls] caFile",
    };
  }
  if (code === "CERT_HAS_EXPIRED" || code === "CERT_NOT_YET_VALID") {
    const now = Date.now();
    const expired = code === "CERT_HAS_EXPIRED";
    const at = chain.find((item) =>
      expired ? Date.parse(item.valid_to) < now : Date.parse(item.valid_from) > now,
    );
    const which =
      at === undefined || at === leaf
        ? certificate
        : `the certificate of ${distinguishedName(at.subject)} in the chain of ${certificate}`;
    const when = at ? ` ${expired ? "on" : "from"} ${at[expired ? "valid_to" : "valid_from"]}` : "";
    return {
      message: `${which} ${expired ? `expired${when}` : `is valid only${when}`} (${code})`,
      hint: expired
        ? "renew the directory's certificate; if it is current, check this machine's clock"
        : "check this machine's clock, and the certificate's dates",
    };
  }
  if (code === "CERT_REVOKED") {
    return {
      message: `${certificate} has been revoked (${code})`,
      hint: "give the directory a new certificate",
    };
  }
  if (VERIFY_CODES.has(code)) {
    return {
      message: `${certificate} does not verify: ${text} (${code})`,
      hint: "check the directory's certificate chain and [directory.tls] caFile",
    };
  }
  const clientCertificate = settings.clientCertificate
    ? "a directory that refuses annal's client certificate ([directory.tls] certFile) closes it too"
    : "a directory that requires a client certificate closes it too: set [directory.tls] certFile and keyFile";
  if (HANDSHAKE_CUT.test(text) || /WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG/.test(code)) {
    return {
      message: `the directory at ${url} ended the connection during the TLS handshake${code ? ` (${code})` : ""}`,
      hint: settings.startTLS
        ? `check the directory's TLS setup; ${clientCertificate}`
        : `check that this port takes ldaps:// (usually 636): a port that takes ldap:// wants ldap:// and [directory.tls] startTLS = true; ${clientCertificate}`,
    };
  }
  return {
    message: `the TLS handshake with the directory at ${url} failed: ${text}${code ? ` (${code})` : ""}`,
    hint: `check the directory's TLS setup and [directory.tls]; ${clientCertificate}`,
  };
}
