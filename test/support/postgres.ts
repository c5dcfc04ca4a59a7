import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createHash } from "node:crypto";
import pg from "pg";
import tap from "tap";
import {
  createPool,
  knownMigrations,
  migrateDatabase,
  startEmbeddedPostgres,
  type Pool,
} from "../../src/db/index.ts";

/**
 * The server every test database lives on. `npm test` (test/support/run-suite.ts) starts one
 * embedded PostgreSQL per run and passes its admin URL in ANNAL_TEST_POSTGRES_URL; with
 * DATABASE_URL set, that server is used instead; a test file run on its own starts a server
 * of its own.
 */
let server: Promise<string> | undefined;

function adminUrl(): Promise<string> {
  server ??= (async () => {
    const given = process.env.ANNAL_TEST_POSTGRES_URL ?? process.env.DATABASE_URL;
    if (given) return given;
    const dataDir = mkdtempSync(path.join(tmpdir(), "annal-test-pg-"));
    const embedded = await startEmbeddedPostgres({ dataDir: path.join(dataDir, "data") });
    // The server's child process keeps the event loop alive, so stop it when the file's
    // tests are done rather than on beforeExit (which would never come).
    tap.teardown(async () => {
      await embedded.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });
    return embedded.url;
  })();
  return server;
}

/** The template is named for the migrations it carries, so a changed migration gets a new one. */
async function templateName(): Promise<string> {
  const hashes = (await knownMigrations()).map((m) => m.hash).join(",");
  return `annal_test_template_${createHash("sha256").update(hashes).digest("hex").slice(0, 12)}`;
}

export interface TestDatabase {
  readonly url: string;
  readonly name: string;
  readonly pool: Pool;
}

interface Teardown {
  teardown(fn: () => unknown): void;
}

/**
 * A database of the test's own, dropped when the test ends. `migrated` (the default) clones a
 * template that already carries every migration, which is much faster than migrating.
 */
export async function testDatabase(
  t: Teardown,
  options: { migrated?: boolean } = {},
): Promise<TestDatabase> {
  const admin = await adminUrl();
  const name = `annal_test_${randomBytes(6).toString("hex")}`;
  const migrated = options.migrated ?? true;
  const template = migrated ? await ensureTemplate(admin) : undefined;
  await withAdmin(admin, (client) =>
    client.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ""}`),
  );
  const url = databaseUrl(admin, name);
  const pool = createPool(url, 20);
  t.teardown(async () => {
    await pool.end();
    await withAdmin(admin, (client) =>
      client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
    );
  });
  return { url, name, pool };
}

export function databaseUrl(admin: string, name: string): string {
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Creates the migrated template once per server (idempotent across test processes). */
export async function ensureTemplate(admin: string): Promise<string> {
  const template = await templateName();
  await withAdmin(admin, async (client) => {
    // Serialise template creation across the test processes of one run.
    await client.query("SELECT pg_advisory_lock(74201)");
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
      await client.query("SELECT pg_advisory_unlock(74201)");
    }
  });
  return template;
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
