import { createHash, randomBytes } from "node:crypto";
import { join } from "node:path";

/** The suffix of every directory annal starts itself (tests and the demo). */
export const SLAPD_BASE = "dc=example,dc=org";
export const SLAPD_ROOT_DN = `cn=admin,${SLAPD_BASE}`;
/** The suffix of the accesslog database, where the overlay writes one entry per change. */
export const ACCESSLOG_BASE = "cn=accesslog";
/** The account annal itself binds as in the demo; it may read the accesslog and act as people. */
export const SLAPD_SERVICE_DN = `uid=svc-annal,ou=services,${SLAPD_BASE}`;

export interface SlapdConfigOptions {
  /** Holds `slapd.conf`, the pid file and the two mdb databases (`data/`, `accesslog/`). */
  readonly dir: string;
  /** The rootdn's password in clear; the config only stores its `{SSHA}` hash. */
  readonly rootPassword: string;
  /** Where the Debian package puts `back_mdb.so` and `accesslog.so`. */
  readonly modulePath?: string;
  /** Where the Debian package puts `core.schema` and friends. */
  readonly schemaDir?: string;
  /**
   * The `syncprov` overlay on the accesslog database (default true), on which annal's capture
   * is told of each write as it is logged; without it capture looks every interval.
   */
  readonly syncprov?: boolean;
  /**
   * The accesslog attributes indexed for equality (default `ACCESSLOG_INDEXED`); capture's
   * passes search by `reqEnd`.
   */
  readonly accesslogIndexed?: readonly string[];
  /** A certificate for `ldaps://` and StartTLS; without it slapd offers neither. */
  readonly tls?: SlapdTls;
}

/** slapd's TLS files (PEM), and whether it asks clients for a certificate of their own. */
export interface SlapdTls {
  /** The CAs slapd trusts for client certificates (`TLSCACertificateFile`). */
  readonly caFile: string;
  readonly certFile: string;
  readonly keyFile: string;
  /** `TLSVerifyClient` (default `never`): `demand` refuses a client without a certificate. */
  readonly verifyClient?: "never" | "allow" | "try" | "demand";
}

/** What the accesslog database indexes (`eq`) unless told otherwise. */
export const ACCESSLOG_INDEXED = [
  "objectClass",
  "reqStart",
  "reqEnd",
  "reqEntryUUID",
  "reqDN",
  "reqResult",
] as const;

/** The paths a config refers to, so the launcher creates the same ones the config names. */
export function slapdPaths(dir: string): {
  conf: string;
  pidFile: string;
  data: string;
  accesslog: string;
} {
  return {
    conf: join(dir, "slapd.conf"),
    pidFile: join(dir, "slapd.pid"),
    data: join(dir, "data"),
    accesslog: join(dir, "accesslog"),
  };
}

/**
 * `{SSHA}` as slappasswd writes it: base64(SHA-1(password + salt) + salt), 8 random salt bytes
 * unless given (generated data passes its own to stay deterministic). Computed here so that
 * starting a directory does not spawn slappasswd.
 */
export function sshaPassword(password: string, salt: Buffer = randomBytes(8)): string {
  const digest = createHash("sha1").update(password, "utf8").update(salt).digest();
  return `{SSHA}${Buffer.concat([digest, salt]).toString("base64")}`;
}

/** A value in slapd.conf is one token; quote it, refusing what the parser could misread. */
function quoted(value: string): string {
  if (/["\\\n\r]/.test(value))
    throw new Error(`slapd.conf value cannot hold ${JSON.stringify(value)}`);
  return `"${value}"`;
}

/**
 * A plain `slapd.conf` (no cn=config) for a private slapd:
 *
 * - `cn=config` readable by the rootdn and the service account: annal reads there which
 *   indexes the accesslog has, to say at start when its passes lack one.
 * - `cn=accesslog` next: the overlay's `logdb` must name a database defined before it.
 *   Only the rootdn and the service account can read it.
 * - `dc=example,dc=org` with the accesslog overlay: every successful write becomes an entry
 *   with `reqType`, `reqDN`, `reqMod`, `reqOld` (old values of what changed, plus
 *   `objectClass` and `entryUUID` always, so a rename or delete still tells what the entry
 *   was), `reqEntryUUID`, `reqStart`, `reqEnd` and `reqAuthzID`. No `logpurge`: the log is the
 *   capture source and is never trimmed behind annal's back.
 * - `authz-policy to`: an account may act as another (RFC 4370 proxied authorization) when
 *   its own `authzTo` allows it; the rootdn may always act as any DN of its database.
 *   `reqAuthzID` then records the assumed identity.
 * - ACLs: authenticated accounts may write (annal, not the directory, decides who may change
 *   what, and a proxied write runs with the assumed identity's rights); passwords are only
 *   usable for binding, and not at all for an entry marked `employeeType: disabled` (the demo's
 *   leaver workflow disables an account so, and a rehire takes the mark away: the password
 *   itself is never touched, so nothing secret has to be kept to restore it).
 */
export function slapdConfig(options: SlapdConfigOptions): string {
  const paths = slapdPaths(options.dir);
  const schemaDir = options.schemaDir ?? "/etc/ldap/schema";
  const schemas = ["core", "cosine", "nis", "inetorgperson"];
  const syncprov = options.syncprov ?? true;
  // A ceiling, not an allocation (the file grows as it is written): room for a sample
  // organisation of a million people (`npm run bench -- graphql --size 1m`).
  const mdbSize = 16 * 1024 * 1024 * 1024;
  return [
    "# Generated by annal (src/slapd/config.ts); rewritten at every start.",
    ...schemas.map((name) => `include ${quoted(join(schemaDir, `${name}.schema`))}`),
    `modulepath ${quoted(options.modulePath ?? "/usr/lib/ldap")}`,
    "moduleload back_mdb",
    "moduleload accesslog",
    ...(syncprov ? ["moduleload syncprov"] : []),
    `pidfile ${quoted(paths.pidFile)}`,
    "authz-policy to",
    "sizelimit unlimited",
    ...(options.tls ? tlsLines(options.tls) : []),
    "",
    "database config",
    `access to * by dn.exact=${quoted(SLAPD_ROOT_DN)} read by dn.exact=${quoted(SLAPD_SERVICE_DN)} read by * none`,
    "",
    "database mdb",
    `suffix ${quoted(ACCESSLOG_BASE)}`,
    `directory ${quoted(paths.accesslog)}`,
    `maxsize ${mdbSize}`,
    `index ${(options.accesslogIndexed ?? ACCESSLOG_INDEXED).join(",")} eq`,
    `access to * by dn.exact=${quoted(SLAPD_ROOT_DN)} read by dn.exact=${quoted(SLAPD_SERVICE_DN)} read by * none`,
    ...(syncprov
      ? ["overlay syncprov", "syncprov-nopresent TRUE", "syncprov-reloadhint TRUE"]
      : []),
    "",
    "database mdb",
    `suffix ${quoted(SLAPD_BASE)}`,
    `rootdn ${quoted(SLAPD_ROOT_DN)}`,
    `rootpw ${sshaPassword(options.rootPassword)}`,
    `directory ${quoted(paths.data)}`,
    `maxsize ${mdbSize}`,
    "index objectClass,entryUUID,uid,member,modifyTimestamp eq",
    "index cn eq,sub",
    "access to filter=(employeeType=disabled) attrs=userPassword by * none",
    "access to attrs=userPassword by self write by anonymous auth by * none",
    "access to * by users write by * read",
    "overlay accesslog",
    `logdb ${quoted(ACCESSLOG_BASE)}`,
    "logops writes",
    "logsuccess TRUE",
    "logold (objectClass=*)",
    "logoldattr objectClass entryUUID",
    "",
  ].join("\n");
}

function tlsLines(tls: SlapdTls): string[] {
  return [
    `TLSCACertificateFile ${quoted(tls.caFile)}`,
    `TLSCertificateFile ${quoted(tls.certFile)}`,
    `TLSCertificateKeyFile ${quoted(tls.keyFile)}`,
    `TLSVerifyClient ${tls.verifyClient ?? "never"}`,
  ];
}
