import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync, rmSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import type { Socket } from "node:net";
import { Readable } from "node:stream";
import { delimiter, dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "ldapts";
import { AnnalError } from "../errors/index.ts";
import { freePort } from "../ports.ts";
import { SLAPD_BASE, SLAPD_ROOT_DN, slapdConfig, slapdPaths, type SlapdTls } from "./config.ts";

/** How to get slapd on Debian or Ubuntu; shown whenever it is missing. */
export const SLAPD_INSTALL_HINT =
  "install OpenLDAP's server: `echo 'slapd slapd/no_configuration boolean true' | debconf-set-selections" +
  " && DEBIAN_FRONTEND=noninteractive apt-get install -y slapd ldap-utils` (Debian/Ubuntu)";

export interface SlapdLaunchOptions {
  /** Config, pid file and databases live here; kept unless `removeOnStop`. */
  readonly dir: string;
  readonly rootPassword: string;
  /** A fixed port; without one a free loopback port is picked. */
  readonly port?: number;
  /**
   * LDIF loaded with slapadd when the database is new (its first start): one string, or
   * pieces of one (`toLdifChunks`) for a seed too large for a string.
   */
  readonly seedLdif: () => string | Iterable<string>;
  /** Remove `dir` when stopped, or when this process exits. */
  readonly removeOnStop?: boolean;
  readonly startTimeoutMs?: number;
  /** `slapdConfig`'s `syncprov` (default true). */
  readonly syncprov?: boolean;
  /** `slapdConfig`'s `accesslogIndexed`. */
  readonly accesslogIndexed?: readonly string[];
  /** `slapdConfig`'s `tls`: slapd then also listens for `ldaps://` on a port of its own. */
  readonly tls?: SlapdTls;
}

export interface SlapdServer {
  readonly url: string;
  readonly port: number;
  /** With `tls`: `ldaps://127.0.0.1:<port>/` (StartTLS is offered on `url`). */
  readonly ldapsUrl: string | undefined;
  /** The slapd process itself (not its watchdog); tests may pause it with SIGSTOP. */
  readonly pid: number;
  readonly dir: string;
  /** True when this start loaded the seed (the database was new). */
  readonly seeded: boolean;
  stop(): Promise<void>;
}

/** The slapd binary: `$SLAPD`, then `PATH`, then the sbin directories PATH often lacks. */
export function findSlapd(): string | undefined {
  const candidates = [
    process.env.SLAPD,
    ...(process.env.PATH ?? "").split(delimiter).map((dir) => dir && join(dir, "slapd")),
    "/usr/sbin/slapd",
    "/usr/local/sbin/slapd",
    "/usr/local/libexec/slapd",
  ];
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; try the next one
    }
  }
  return undefined;
}

/** Runs a command to completion, feeding `input`; resolves with its exit code and stderr. */
function run(
  command: string,
  args: string[],
  input: string | Iterable<string>,
): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["pipe", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code: code ?? 1, stderr }));
    child.stdin.on("error", () => {}); // an early exit closes the pipe; `close` reports why
    if (typeof input === "string") child.stdin.end(input);
    else Readable.from(input).on("error", reject).pipe(child.stdin);
  });
}

async function seed(slapd: string, dir: string, ldif: string | Iterable<string>): Promise<void> {
  const paths = slapdPaths(dir);
  const slapadd = join(dirname(slapd), "slapadd");
  // -q: no consistency checks, fine for a fresh database we just generated
  const args = ["-f", paths.conf, "-b", SLAPD_BASE, "-q"];
  const result = await (existsSync(slapadd)
    ? run(slapadd, args, ldif)
    : run(slapd, ["-Tadd", ...args], ldif));
  if (result.code !== 0) {
    // leave no half-loaded database behind: the next start must seed again
    await rm(paths.data, { recursive: true, force: true });
    throw new AnnalError(
      "ANNAL_SLAPD_SEED_FAILED",
      `slapadd could not load the seed LDIF: ${result.stderr.trim()}`,
      {
        hint: "check the generated LDIF against the schemas in /etc/ldap/schema",
      },
    );
  }
}

/**
 * slapd runs under a tiny shell watchdog that reads its own stdin, our pipe: when this process
 * ends in any way (even SIGKILL) the pipe closes, `cat` returns and slapd gets SIGTERM. Closing
 * the pipe is also how `stop()` asks for a clean shutdown.
 *
 * The watchdog (and so slapd) leads a process group of its own (`detached`), out of reach of a
 * terminal's Ctrl-C, which signals annal's whole group: slapd then stopped at once, while
 * capture still read from it, and capture logged the refused connections before annal's own
 * orderly stop reached it. annal stops slapd itself, after capture; the pipe still ends it
 * when annal dies.
 */
const WATCHDOG =
  'exec 3<&0; "$@" </dev/null & pid=$!; { cat <&3 >/dev/null; kill $pid 2>/dev/null; } & wait $pid';

interface Running {
  child: ChildProcess;
  exited: Promise<number | null>;
  stderr: () => string;
}

function spawnWatched(slapd: string, conf: string, urls: string): Running {
  const child = spawn(
    "/bin/sh",
    ["-c", WATCHDOG, "slapd-watchdog", slapd, "-f", conf, "-h", urls, "-d", "none"],
    { stdio: ["pipe", "ignore", "pipe"], detached: true },
  );
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-8000);
  });
  child.stdin?.on("error", () => {});
  const exited = new Promise<number | null>((resolve) => {
    child.once("error", () => resolve(null));
    child.once("exit", (code) => {
      child.stdin?.destroy(); // lets the watchdog's `cat` finish too
      resolve(code);
    });
  });
  // the watchdog must not keep a test alive on its own: the exit hook stops slapd then
  child.unref();
  for (const stream of [child.stdin, child.stderr]) (stream as Socket | null)?.unref();
  return { child, exited, stderr: () => stderr };
}

async function answersBind(url: string, password: string): Promise<boolean> {
  const client = new Client({ url, connectTimeout: 1000, timeout: 2000 });
  try {
    await client.bind(SLAPD_ROOT_DN, password);
    return true;
  } catch {
    return false;
  } finally {
    await client.unbind().catch(() => {});
  }
}

const exitCleanups = new Set<() => void>();
let exitHookInstalled = false;

/**
 * Runs `cleanup` when this process exits, however it ends but SIGKILL, unless the returned
 * function is called first: how a private server (slapd here, 389 and Samba in the tests) is
 * stopped and its directory removed when a test or the demo ends without stopping it.
 */
export function onProcessExit(cleanup: () => void): () => void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => exitCleanups.forEach((fn) => fn()));
  }
  exitCleanups.add(cleanup);
  return () => exitCleanups.delete(cleanup);
}

/**
 * Starts a private slapd on a loopback port with the config from `slapdConfig`, loading the seed
 * with slapadd first when the database is new, and resolves once it answers a bind as the rootdn.
 */
export async function launchSlapd(options: SlapdLaunchOptions): Promise<SlapdServer> {
  try {
    return await launch(options);
  } catch (error) {
    if (options.removeOnStop) await rm(options.dir, { recursive: true, force: true });
    throw error;
  }
}

async function launch(options: SlapdLaunchOptions): Promise<SlapdServer> {
  const slapd = findSlapd();
  if (slapd === undefined) {
    throw new AnnalError("ANNAL_SLAPD_NOT_INSTALLED", "slapd (OpenLDAP's server) was not found", {
      hint: SLAPD_INSTALL_HINT,
    });
  }
  const { dir } = options;
  const paths = slapdPaths(dir);
  await mkdir(paths.accesslog, { recursive: true });
  const config = slapdConfig({
    dir,
    rootPassword: options.rootPassword,
    ...(options.syncprov === undefined ? {} : { syncprov: options.syncprov }),
    ...(options.accesslogIndexed ? { accesslogIndexed: options.accesslogIndexed } : {}),
    ...(options.tls ? { tls: options.tls } : {}),
  });
  await writeFile(paths.conf, config, {
    mode: 0o600,
  });
  const seeded = !existsSync(join(paths.data, "data.mdb"));
  if (seeded) {
    await mkdir(paths.data, { recursive: true });
    await seed(slapd, dir, options.seedLdif());
  }

  const deadline = Date.now() + (options.startTimeoutMs ?? 15_000);
  // A picked port can be taken by someone else before slapd binds it; then pick another.
  for (let attempt = 1; ; attempt++) {
    const port = options.port ?? (await freePort());
    const url = `ldap://127.0.0.1:${port}/`;
    const ldapsUrl = options.tls ? `ldaps://127.0.0.1:${await freePort()}/` : undefined;
    const urls = ldapsUrl === undefined ? url : `${url} ${ldapsUrl}`;
    // slapd writes its pid file once it listens. Requiring it (fresh) as well as a bind keeps
    // us from mistaking another slapd that won the race for this port for ours.
    await rm(paths.pidFile, { force: true });
    const running = spawnWatched(slapd, paths.conf, urls);
    let exitCode: number | null | undefined;
    void running.exited.then((code) => (exitCode = code));
    const ready = async (): Promise<boolean> =>
      existsSync(paths.pidFile) && (await answersBind(url, options.rootPassword));
    while (exitCode === undefined && Date.now() < deadline && !(await ready())) {
      await sleep(15);
    }
    if (exitCode === undefined && Date.now() < deadline) {
      return started(running, {
        url,
        ldapsUrl,
        port,
        dir,
        seeded,
        removeOnStop: options.removeOnStop ?? false,
      });
    }
    running.child.stdin?.destroy();
    const stderr = running.stderr();
    if (options.port === undefined && /Address already in use/.test(stderr) && attempt < 5)
      continue;
    throw new AnnalError(
      "ANNAL_SLAPD_START_FAILED",
      exitCode === undefined
        ? `slapd did not answer a bind on ${url} in time`
        : `slapd exited with status ${exitCode} before it answered on ${url}: ${stderr.trim().split("\n").slice(-3).join(" | ")}`,
      {
        hint: `its config is ${paths.conf}; run \`${slapd} -f ${paths.conf} -h "${urls}" -d stats\` to see why`,
      },
    );
  }
}

function started(
  running: Running,
  at: {
    url: string;
    ldapsUrl: string | undefined;
    port: number;
    dir: string;
    seeded: boolean;
    removeOnStop: boolean;
  },
): SlapdServer {
  const { pidFile } = slapdPaths(at.dir);
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  const forget = onProcessExit(() => {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // already gone
    }
    if (at.removeOnStop) rmSync(at.dir, { recursive: true, force: true });
  });
  let stopping: Promise<void> | undefined;
  const stop = async (): Promise<void> => {
    running.child.ref(); // the watchdog is unref'd: keep this process up until slapd is gone
    running.child.stdin?.end();
    const exited = await Promise.race([
      running.exited.then(() => true),
      sleep(5000, false, { ref: false }),
    ]);
    if (!exited) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // it went away on its own after all
      }
      await running.exited;
    }
    forget();
    if (at.removeOnStop) await rm(at.dir, { recursive: true, force: true });
  };
  return {
    url: at.url,
    ldapsUrl: at.ldapsUrl,
    port: at.port,
    pid,
    dir: at.dir,
    seeded: at.seeded,
    stop: () => (stopping ??= stop()),
  };
}
