import { mkdir } from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import type { AnnalConfig } from "../config/index.ts";
import {
  createPool,
  databaseAddress,
  describeAddress,
  onAvailability,
  type DatabaseAddress,
  startEmbeddedPostgres,
  type EmbeddedDatabase,
  type Pool,
} from "../db/index.ts";
import type { Logger } from "../logger.ts";
import {
  claimEmbeddedDataDir,
  EmbeddedDatabaseInUseError,
  runningEmbeddedServer,
} from "./embedded-lock.ts";

/** The database annal keeps its data in, inside the embedded server. */
const EMBEDDED_DATABASE = "annal";

export interface OpenDatabase {
  readonly pool: Pool;
  /**
   * For logs and messages: the embedded data directory, or the URL with its password masked,
   * and how annal reaches it (`embedded PostgreSQL in .annal/postgres, over the Unix socket
   * .annal/postgres/.s.PGSQL.41234`).
   */
  readonly description: string;
  /** How annal reaches the database: its Unix socket (the embedded server's), or TCP. */
  readonly address: DatabaseAddress;
  readonly embedded: boolean;
  /** Ends the pool, then stops the embedded server (a clean shutdown keeps its data consistent). */
  close(): Promise<void>;
}

/**
 * The database of `config`: `database.url` (into which `DATABASE_URL` is already folded)
 * when given, else the embedded PostgreSQL with its data in `<database.dataDir>/postgres`,
 * started here and kept across restarts.
 */
export async function openDatabase(config: AnnalConfig, log: Logger): Promise<OpenDatabase> {
  const opened = await openPool(config, log);
  logAvailability(opened.pool, log);
  return opened;
}

/**
 * Logs once when PostgreSQL goes away (requests are answered 503 `ANNAL_DATABASE_UNREACHABLE`
 * meanwhile, and each part waits and tries again) and once when annal reaches it again.
 */
function logAvailability(pool: Pool, log: Logger): void {
  let since = 0;
  onAvailability(pool, (unreachable, error, reachedBefore) => {
    // Never reached: whoever opened the pool reports that failure itself (start, verify).
    if (unreachable && !reachedBefore) return;
    if (!unreachable && since === 0) return;
    if (unreachable) {
      since = Date.now();
      log.error(
        { code: "ANNAL_DATABASE_UNREACHABLE", reason: (error as Error | undefined)?.message },
        "the database is unreachable; requests are answered 503 until it is back",
      );
    } else {
      log.info({ downMs: Date.now() - since }, "the database is reachable again");
      since = 0;
    }
  });
}

async function openPool(config: AnnalConfig, log: Logger): Promise<OpenDatabase> {
  const { url, poolSize, connectionTimeout } = config.database;
  const bounds = { connectionTimeoutMs: connectionTimeout };
  if (url !== undefined) {
    const pool = createPool(url, poolSize, bounds);
    const address = databaseAddress(url);
    return {
      pool,
      description: `${maskDatabaseUrl(url)}, ${describeAddress(address)}`,
      address,
      embedded: false,
      close: () => pool.end(),
    };
  }

  const stateDir = config.database.dataDir;
  await mkdir(stateDir, { recursive: true });
  let claim: Awaited<ReturnType<typeof claimEmbeddedDataDir>>;
  try {
    claim = await claimEmbeddedDataDir(stateDir);
  } catch (error) {
    // Another annal runs the embedded server: use it (its URL is in the lock file).
    const running =
      error instanceof EmbeddedDatabaseInUseError && (await runningEmbeddedServer(stateDir));
    if (!running) throw error;
    const pool = createPool(running.url, poolSize, bounds);
    const address = databaseAddress(running.url);
    return {
      pool,
      description: `the embedded PostgreSQL of the annal running as pid ${running.pid}, ${describeAddress(address)}`,
      address,
      embedded: true,
      close: () => pool.end(),
    };
  }
  const postgresLog = log.child({ component: "postgres" });
  let server: EmbeddedDatabase;
  try {
    server = await startEmbeddedPostgres({
      dataDir: path.join(stateDir, "postgres"),
      onLog: (line) => postgresLog.debug(line),
      // A permission changed outside annal's own directories: said where the user reads.
      onNotice: (line) => postgresLog.warn(line),
    });
  } catch (error) {
    await claim.release();
    throw error;
  }
  const stop = async () => {
    try {
      await server.stop();
    } finally {
      await claim.release();
    }
  };
  try {
    // Over the server's Unix socket (`server.url`): the embedded server is on this machine.
    const databaseUrl = await ensureDatabase(server.url, EMBEDDED_DATABASE);
    await claim.publish(databaseUrl);
    const pool = createPool(databaseUrl, poolSize, bounds);
    const address = databaseAddress(databaseUrl);
    return {
      pool,
      description: `embedded PostgreSQL in ${server.dataDir}, ${describeAddress(address)}`,
      address,
      embedded: true,
      close: async () => {
        try {
          await pool.end();
        } finally {
          await stop();
        }
      },
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Creates database `name` on the server of `serverUrl` unless it exists; returns its URL. */
async function ensureDatabase(serverUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** `postgres://annal:****@db:5432/annal`: the URL with its password (and any password parameter) masked. */
export function maskDatabaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "(a database URL that does not parse)";
  }
  if (parsed.password !== "") parsed.password = "****";
  for (const key of [...parsed.searchParams.keys()]) {
    if (/password|secret/i.test(key)) parsed.searchParams.set(key, "****");
  }
  return parsed.toString();
}
