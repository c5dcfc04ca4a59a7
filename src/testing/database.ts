import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import {
  createPool,
  knownMigrations,
  migrateDatabase,
  startEmbeddedPostgres,
  type EmbeddedDatabase,
  type Pool,
} from "../db/index.ts";

/** A database of one workflow test's own, dropped by `drop`. */
export interface TestDatabase {
  readonly pool: Pool;
  readonly url: string;
  drop(): Promise<void>;
}

/**
 * The PostgreSQL server the driver makes databases on: `DATABASE_URL`'s, or an embedded one
 * this process starts on first need. The embedded one keeps its cluster for the life of the
 * process (initialised once, a second or so) and runs while any test's database is open, so a
 * process that ends its tests leaves no server behind.
 */
class Server {
  #embedded: Promise<EmbeddedDatabase> | undefined;
  #open = 0;
  #dataDir: string | undefined;

  async acquire(): Promise<string> {
    this.#open++;
    if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
    if (!this.#dataDir) {
      this.#dataDir = mkdtempSync(path.join(os.tmpdir(), "annal-workflow-test-"));
      const dir = this.#dataDir;
      process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    }
    this.#embedded ??= startEmbeddedPostgres({ dataDir: path.join(this.#dataDir, "pg") });
    return (await this.#embedded).url;
  }

  async release(): Promise<void> {
    if (--this.#open > 0 || !this.#embedded) return;
    const embedded = this.#embedded;
    this.#embedded = undefined;
    await (await embedded).stop();
  }
}

const server = new Server();

/** A new database on the server, cloned from a migrated template (made once per server). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = await server.acquire();
  try {
    const db = await createDatabaseOn(admin, "annal_wftest");
    return {
      ...db,
      async drop() {
        await db.drop();
        await server.release();
      },
    };
  } catch (error) {
    await server.release();
    throw error;
  }
}

/**
 * A new database named `<prefix>_<random>` on the server of `admin` (a URL whose role may
 * create databases), cloned from a migrated template made once per server and migration set:
 * the test driver's databases, and the simulator's scratch databases beside the live one.
 */
export async function createDatabaseOn(admin: string, prefix: string): Promise<TestDatabase> {
  const template = await ensureTemplate(admin);
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  await withAdmin(admin, (client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
  const url = databaseUrl(admin, name);
  const pool = createPool(url, 10);
  let dropped = false;
  return {
    pool,
    url,
    async drop() {
      if (dropped) return;
      dropped = true;
      await pool.end();
      await withAdmin(admin, (client) =>
        client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
      );
    },
  };
}

async function ensureTemplate(admin: string): Promise<string> {
  const hashes = (await knownMigrations()).map((m) => m.hash).join(",");
  const template = `annal_wftest_template_${createHash("sha256").update(hashes).digest("hex").slice(0, 12)}`;
  await withAdmin(admin, async (client) => {
    // One process at a time builds it (tests in parallel processes share the server).
    await client.query("SELECT pg_advisory_lock(74202)");
    try {
      const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [template]);
      if (exists.rowCount) return;
      const building = `${template}_building`;
      await client.query(`DROP DATABASE IF EXISTS ${building}`);
      await client.query(`CREATE DATABASE ${building}`);
      const pool = createPool(databaseUrl(admin, building), 2);
      try {
        await migrateDatabase(pool);
      } finally {
        await pool.end();
      }
      await client.query(`ALTER DATABASE ${building} RENAME TO ${template}`);
    } finally {
      await client.query("SELECT pg_advisory_unlock(74202)");
    }
  });
  return template;
}

function databaseUrl(admin: string, name: string): string {
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

async function withAdmin<T>(admin: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
