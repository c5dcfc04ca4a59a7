import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  baseEntries,
  launchSlapd,
  SLAPD_BASE,
  SLAPD_ROOT_DN,
  toLdif,
  type SlapdTls,
} from "../../src/slapd/index.ts";

/** A private slapd for one test file: loopback only, its own databases, accesslog on. */
export interface Slapd {
  readonly url: string;
  /** With `tls`: its `ldaps://` listener (`url` offers StartTLS then). */
  readonly ldapsUrl?: string | undefined;
  readonly base: "dc=example,dc=org";
  /** The rootdn; it may read `cn=accesslog` and act as any entry (proxied authorization). */
  readonly bindDN: string;
  readonly password: string;
  readonly dataDir: string;
  /** The slapd process, for tests that pause it (SIGSTOP) or look at it. */
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * Starts slapd with `dc=example,dc=org`, `ou=people`, `ou=groups`, `ou=services` and then
 * `seedLdif` loaded (slapadd, before start, so the seed is not in the accesslog). With
 * `dataDir` an existing database there is reused and kept; otherwise a temporary directory is
 * removed on `stop()` or when the test process exits.
 *
 * @example
 * const slapd = await startSlapd();
 * t.teardown(() => slapd.stop());
 */
export async function startSlapd(
  options: {
    seedLdif?: string;
    dataDir?: string;
    syncprov?: boolean;
    accesslogIndexed?: readonly string[];
    /** A certificate: slapd then offers StartTLS on `url` and listens on `ldapsUrl` too. */
    tls?: SlapdTls;
  } = {},
): Promise<Slapd> {
  const password = process.env.LDAP_PASSWORD || randomBytes(18).toString("base64url");
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), "annal-slapd-")));
  const server = await launchSlapd({
    dir: dataDir,
    rootPassword: password,
    seedLdif: () => `${toLdif(baseEntries())}\n${options.seedLdif ?? ""}`,
    removeOnStop: options.dataDir === undefined,
    ...(options.syncprov === undefined ? {} : { syncprov: options.syncprov }),
    ...(options.accesslogIndexed ? { accesslogIndexed: options.accesslogIndexed } : {}),
    ...(options.tls ? { tls: options.tls } : {}),
  });
  return {
    url: server.url,
    ldapsUrl: server.ldapsUrl,
    base: SLAPD_BASE,
    bindDN: SLAPD_ROOT_DN,
    password,
    dataDir,
    pid: server.pid,
    stop: () => server.stop(),
  };
}
