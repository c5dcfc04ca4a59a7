import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onProcessExit } from "../../src/slapd/index.ts";
import { answersAsThisDC, certificateHostName } from "./samba/ldaps.ts";
import { SAMBA_ADDRESSES, signalGroup, startOnLoopback } from "./samba/loopback.ts";
import { provisionDomain, SAMBA_ADMIN_DN, SAMBA_BASE, sambaPaths } from "./samba/provision.ts";
import { loadLdif } from "./samba/seed.ts";
import { findSambaPrograms } from "./samba/tools.ts";

export { adDN, adGroup, adOrganizationalUnit, adUser } from "./samba/seed.ts";
export { lockFileOf, SAMBA_ADDRESSES } from "./samba/loopback.ts";
export { SAMBA_ADMIN_DN, SAMBA_BASE, SAMBA_DOMAIN, SAMBA_REALM } from "./samba/provision.ts";
export { SAMBA_INSTALL_HINT, SAMBA_PACKAGES } from "./samba/tools.ts";

/**
 * A Samba Active Directory domain controller of the test's own: domain EXAMPLE.TEST
 * (`DC=example,DC=test`), LDAP only, on a loopback address, with Samba's default security
 * (a simple bind is refused without TLS: result 8, strong authentication required).
 */
export interface SambaDC {
  /** `ldaps://127.0.0.N:636`. */
  readonly url: string;
  /** `ldap://127.0.0.N:389`, where only StartTLS or a SASL bind with signing gets anywhere. */
  readonly plainUrl: string;
  /** The DC's own CA (PEM), `<dataDir>/private/tls/ca.pem`, to verify its certificate with. */
  readonly caFile: string;
  /** The name its certificate names (`DC1.example.test`), to give TLS as `servername`. */
  readonly serverName: string;
  /** What ldapts's `Client` takes to verify the DC: `new Client({ url, tlsOptions })`. */
  readonly tlsOptions: { readonly ca: Buffer; readonly servername: string };
  readonly base: "DC=example,DC=test";
  /** The domain's administrator, `CN=Administrator,CN=Users,DC=example,DC=test`. */
  readonly bindDN: string;
  readonly password: string;
  readonly dataDir: string;
  /** samba's pid, the leader of its own process group. */
  readonly pid: number;
  /** What the start took, in ms: provisioning, the seed's ldbadd, the wait for a free address, samba's start. */
  readonly timings: {
    readonly provisionMs: number;
    readonly seedMs: number;
    readonly lockWaitMs: number;
    readonly startMs: number;
  };
  /** Stops samba (SIGTERM to its process group) and removes its directory. */
  stop(): Promise<void>;
}

export interface SambaDCOptions {
  /**
   * LDIF loaded into `sam.ldb` with ldbadd before the DC starts, through Samba's own modules
   * (so objects get their objectGUID and objectSid): `toLdif`/`toLdifChunks` of `adUser`,
   * `adGroup` and `adOrganizationalUnit` entries, parents first. 5,000 users load in about 8 s.
   */
  readonly seedLdif?: string | Iterable<string>;
  /** The loopback addresses to try, in order (default `SAMBA_ADDRESSES`). */
  readonly addresses?: readonly string[];
  /** How long to wait for an address while other tests' DCs hold them all (default 15 min). */
  readonly lockTimeoutMs?: number;
  /** How long samba may take to answer LDAPS once it has its address (default 60 s). */
  readonly startTimeoutMs?: number;
  /** Called when every address is held by another DC and the start waits for `address`. */
  readonly onWait?: (address: string) => void;
}

/**
 * Provisions a throwaway domain into a new temporary directory, loads `seedLdif`, and starts
 * `samba -i` on it; resolves once the administrator's LDAPS bind, verified against the DC's own
 * CA and certificate name, succeeds. Throws, naming what to install, where Samba is missing: a
 * test that needs a DC fails rather than skips.
 *
 * One DC holds one loopback address's LDAP ports (389, 636, 3268, 3269 cannot be changed), under
 * a machine-wide lock on that address (`/tmp/annal-samba-dc-<address>.lock`, held by samba
 * itself, so never stale). A start takes the first free address of `SAMBA_ADDRESSES`; when
 * every one is held by another DC (other test files, other checkouts on the machine) it waits
 * for one rather than fail. A DC that is not stopped is stopped, and its directory removed,
 * when the test process exits; if the process dies, samba sees its stdin close and exits.
 *
 * @example
 * const dc = await startSambaDC({ seedLdif: toLdif([adUser("ada")]) });
 * t.teardown(() => dc.stop());
 * const client = new Client({ url: dc.url, tlsOptions: dc.tlsOptions });
 * await client.bind(dc.bindDN, dc.password);
 */
export async function startSambaDC(options: SambaDCOptions = {}): Promise<SambaDC> {
  const programs = findSambaPrograms();
  // Samba wants upper and lower case, a digit and a symbol; the random part makes it strong.
  const password = `Aa1-${randomBytes(18).toString("base64url")}`;
  const dataDir = await mkdtemp(join(tmpdir(), "annal-samba-"));
  const paths = sambaPaths(dataDir);
  try {
    let mark = Date.now();
    await provisionDomain(programs, dataDir, password);
    const provisionMs = Date.now() - mark;
    mark = Date.now();
    if (options.seedLdif !== undefined) await loadLdif(programs, dataDir, options.seedLdif);
    const seedMs = Date.now() - mark;
    mark = Date.now();
    const running = await startOnLoopback({
      programs,
      dir: dataDir,
      addresses: options.addresses ?? SAMBA_ADDRESSES,
      lockTimeoutMs: options.lockTimeoutMs ?? 15 * 60_000,
      startTimeoutMs: options.startTimeoutMs ?? 60_000,
      answers: (address) =>
        answersAsThisDC({
          url: `ldaps://${address}:636`,
          caFile: paths.caFile,
          certFile: paths.certFile,
          bindDN: SAMBA_ADMIN_DN,
          password,
        }),
      ...(options.onWait ? { onWait: options.onWait } : {}),
    });
    const startMs = Date.now() - mark - running.lockWaitMs;
    const forget = onProcessExit(() => {
      signalGroup(running.pid, "SIGTERM");
      rmSync(dataDir, { recursive: true, force: true });
    });
    const [ca, serverName] = await Promise.all([
      readFile(paths.caFile),
      readFile(paths.certFile).then(certificateHostName),
    ]).catch(async (error: unknown) => {
      await running.stop();
      forget();
      throw error;
    });
    let stopping: Promise<void> | undefined;
    return {
      url: `ldaps://${running.address}:636`,
      plainUrl: `ldap://${running.address}:389`,
      caFile: paths.caFile,
      serverName,
      tlsOptions: { ca, servername: serverName },
      base: SAMBA_BASE,
      bindDN: SAMBA_ADMIN_DN,
      password,
      dataDir,
      pid: running.pid,
      timings: { provisionMs, seedMs, lockWaitMs: running.lockWaitMs, startMs },
      stop: () =>
        (stopping ??= (async () => {
          await running.stop();
          forget();
          await rm(dataDir, { recursive: true, force: true });
        })()),
    };
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}
