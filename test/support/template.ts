import { createHash } from "node:crypto";
import pg from "pg";
import { createPool, knownMigrations, migrateDatabase } from "../../src/db/index.ts";

// No `tap` here: test/support/run-suite.ts imports this module, and importing tap would give
// the runner process itself tap's timeout.

/** The template is named for the migrations it carries, so a changed migration gets a new one. */
async function templateName(): Promise<string> {
  const hashes = (await knownMigrations()).map((m) => m.hash).join(",");
  return `annal_test_template_${createHash("sha256").update(hashes).digest("hex").slice(0, 12)}`;
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

export function databaseUrl(admin: string, name: string): string {
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function withAdmin<T>(
  admin: string,
  work: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
