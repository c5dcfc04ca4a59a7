import { randomBytes } from "node:crypto";
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { existsSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { onProcessExit, sshaPassword, toLdif } from "../../src/slapd/index.ts";
import { freePort } from "../../src/ports.ts";
import { DIRSRV_DATA_DIR, DIRSRV_ROOT_DN, dirsrvPaths, dseLdif } from "./dirsrv/dse.ts";
import { ExitedEarly, findNsSlapd, runNsSlapd, type RunningDirsrv } from "./dirsrv/process.ts";
import { ldapadd, suffixEntries } from "./dirsrv/seed.ts";

export { DIRSRV_ROOT_DN } from "./dirsrv/dse.ts";
export { DIRSRV_INSTALL_HINT } from "./dirsrv/process.ts";

/** A private 389 Directory Server for one test file: loopback only, in a directory of its own. */
export interface Dirsrv {
  /** `ldap://127.0.0.1:<port>/`. */
  readonly url: string;
  readonly base: string;
  /** `cn=Directory Manager`, outside the suffix; ACIs do not apply to it. */
  readonly bindDN: string;
  readonly password: string;
  readonly dataDir: string;
  /** ns-slapd's pid (a new one after `restart()`). */
  readonly pid: number;
  /**
   * The attribute that names each entry for good: `entryUUID` with the plugin, else
   * `nsUniqueId`. As started: 389 adds the entryUUID plugin's entries itself at its first start,
   * so after a `restart()` new entries have an entryUUID whatever this says.
   */
  readonly identity: "entryUUID" | "nsUniqueId";
  /** Whether `cn=changelog` (the Retro Changelog) records each write. */
  readonly changelog: boolean;
  /** What the start took, in ms: writing the instance, ns-slapd's start to its first bind, the seed. */
  readonly timings: {
    readonly createMs: number;
    readonly startMs: number;
    readonly seedMs: number;
  };
  /**
   * Kills ns-slapd and starts it again on the same directory and port, resolving once it
   * answers a bind: 389 reads its plugins' switches (`nsslapd-pluginEnabled`), a plugin's
   * `nsslapd-attribute`s and TLS only at start. Nothing is lost: 389 writes `cn=config` to
   * `dse.ldif` as it changes, and the database's log is durable.
   */
  restart(): Promise<void>;
  /** Stops ns-slapd (SIGKILL; its watchdog reaps it) and removes its directory. */
  stop(): Promise<void>;
}

export interface DirsrvOptions {
  /** The one backend's suffix (default `dc=example,dc=org`, the private slapd's). */
  readonly suffix?: string;
  /** LDIF added after the suffix entry and its `ou=people`, `ou=groups`, `ou=services`. */
  readonly seedLdif?: string;
  /**
   * The entryUUID plugin (default off: Debian's build leaves it out, so a stock 389 names its
   * entries only by `nsUniqueId`).
   */
  readonly entryUUID?: boolean;
  /**
   * The Retro Changelog: one `changenumber=N,cn=changelog` entry per write, with
   * `targetUniqueId` and, with the plugin, `targetEntryUUID`. The seed's adds are its first
   * records; the root DSE's `lastchangenumber` says where they end.
   */
  readonly changelog?: boolean;
  readonly startTimeoutMs?: number;
}

/**
 * Creates a 389 instance from the package's templates in a new temporary directory, starts
 * `ns-slapd -D <config> -i <pid file>` on a free loopback port, and adds the suffix's entries
 * and `seedLdif` as the root DN. The server is stopped and its directory removed on `stop()`, or
 * when the test process exits; if the process dies, the server's watchdog stops it.
 *
 * @example
 * const ds = await startDirsrv({ entryUUID: true, changelog: true });
 * t.teardown(() => ds.stop());
 * const client = new Client({ url: ds.url });
 * await client.bind(ds.bindDN, ds.password);
 */
export async function startDirsrv(options: DirsrvOptions = {}): Promise<Dirsrv> {
  const nsSlapd = findNsSlapd();
  const suffix = options.suffix ?? "dc=example,dc=org";
  if (!/^[a-z]+=[\w.-]+(,[a-z]+=[\w.-]+)*$/i.test(suffix))
    throw new Error(`a test suffix is plain attribute=value pairs: ${JSON.stringify(suffix)}`);
  const password = randomBytes(18).toString("base64url");
  const dir = await mkdtemp(join(tmpdir(), "annal-dirsrv-"));
  const paths = dirsrvPaths(dir);
  let server: RunningDirsrv | undefined;
  const forget = onProcessExit(() => {
    if (server !== undefined) signal(server.pid, "SIGTERM");
    rmSync(dir, { recursive: true, force: true });
  });
  try {
    let mark = Date.now();
    const templates = {
      dse: await readFile(join(DIRSRV_DATA_DIR, "template-dse.ldif"), "utf8"),
      suffixDb: await readFile(join(DIRSRV_DATA_DIR, "template-suffix-db.ldif"), "utf8"),
    };
    await createDirectories(paths);
    await writeFile(paths.passwordFile, password, { mode: 0o600 }); // for ldapadd's -y
    const instance = {
      dir,
      suffix,
      rootPasswordHash: sshaPassword(password),
      user: userInfo().username,
      entryUUID: options.entryUUID ?? false,
      changelog: options.changelog ?? false,
    };
    const createMs = Date.now() - mark;
    mark = Date.now();
    let url = "";
    // A picked port can be taken before ns-slapd binds it; then the instance gets another.
    for (let attempt = 1; server === undefined; attempt++) {
      const port = await freePort();
      url = `ldap://127.0.0.1:${port}/`;
      await writeFile(paths.dse, dseLdif(templates, { ...instance, port }), { mode: 0o600 });
      try {
        server = await runNsSlapd({
          nsSlapd,
          dir,
          url,
          password,
          timeoutMs: options.startTimeoutMs ?? 30_000,
        });
      } catch (error) {
        if (!(error instanceof ExitedEarly && error.portTaken && attempt < 5)) throw error;
      }
    }
    const startMs = Date.now() - mark;
    mark = Date.now();
    await ldapadd(
      url,
      paths.passwordFile,
      `${toLdif(suffixEntries(suffix))}\n${options.seedLdif ?? ""}`,
    );
    const seedMs = Date.now() - mark;
    let running = server;
    // A restart and the stop are one after the other: a stop during a restart waits for it,
    // so that it kills the ns-slapd the restart started, not the one before.
    let restarting: Promise<void> = Promise.resolve();
    let stopping: Promise<void> | undefined;
    return {
      url,
      base: suffix,
      bindDN: DIRSRV_ROOT_DN,
      password,
      dataDir: dir,
      get pid() {
        return running.pid;
      },
      identity: instance.entryUUID ? "entryUUID" : "nsUniqueId",
      changelog: instance.changelog,
      timings: { createMs, startMs, seedMs },
      restart: () => {
        if (stopping !== undefined) return Promise.reject(new Error("the instance is stopped"));
        restarting = restarting
          .catch(() => {})
          .then(async () => {
            // Killed, not shut down: a clean shutdown takes ns-slapd over 2 s.
            await running.stop();
            server = undefined;
            server = running = await runNsSlapd({
              nsSlapd,
              dir,
              url,
              password,
              timeoutMs: options.startTimeoutMs ?? 30_000,
            });
          });
        return restarting;
      },
      stop: () =>
        (stopping ??= (async () => {
          await restarting.catch(() => {}); // a failed restart left no server running
          await running.stop();
          forget();
          await rm(dir, { recursive: true, force: true });
        })()),
    };
  } catch (error) {
    await server?.stop();
    forget();
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The instance's directories, and the two files dscreate copies from /etc/dirsrv. */
async function createDirectories(paths: ReturnType<typeof dirsrvPaths>): Promise<void> {
  for (const dir of [paths.schema, paths.db, paths.log, paths.run, ...paths.others])
    await mkdir(dir, { recursive: true });
  for (const [from, to] of [
    ["/etc/dirsrv/config/slapd-collations.conf", join(paths.config, "slapd-collations.conf")],
    ["/etc/dirsrv/config/certmap.conf", join(paths.config, "certmap.conf")],
    ["/etc/dirsrv/schema/99user.ldif", join(paths.schema, "99user.ldif")],
  ] as const) {
    if (existsSync(from)) await copyFile(from, to);
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}
