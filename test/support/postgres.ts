import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import tap from "tap";
import { createPool, startEmbeddedPostgres, type Pool } from "../../src/db/index.ts";
import { databaseUrl, ensureTemplate, withAdmin } from "./template.ts";

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
