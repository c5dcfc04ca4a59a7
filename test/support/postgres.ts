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
    return given ?? (await privatePostgres());
  })();
  return server;
}

/**
 * A PostgreSQL server of the test file's own (a new embedded cluster), stopped when the
 * file's tests are done; its admin URL. For tests that need the whole cluster to themselves,
 * e.g. to drive its transaction ids (`burnTransactionIds`), or with server `settings` of its
 * own (`wal_level=logical`); pass it as `server` to `testDatabase`.
 */
export async function privatePostgres(
  options: { settings?: Readonly<Record<string, string>> } = {},
): Promise<string> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "annal-test-pg-"));
  const embedded = await startEmbeddedPostgres({
    dataDir: path.join(dataDir, "data"),
    ...(options.settings ? { settings: options.settings } : {}),
  });
  // The server's child process keeps the event loop alive, so stop it when the file's
  // tests are done rather than on beforeExit (which would never come).
  tap.teardown(async () => {
    await embedded.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return embedded.url;
}

/**
 * Ends transactions until the cluster's next transaction id is at least `next`, so that a
 * test can put its writes on both sides of a power of ten (999 → 1000, 9999 → 10000), where
 * ordering by the text of a transaction id goes wrong. Transaction ids are the cluster's,
 * so this needs a server the test has to itself (`privatePostgres`) to be exact.
 */
export async function burnTransactionIds(pool: Pool, next: bigint): Promise<void> {
  const client = await pool.connect();
  try {
    // A procedure may COMMIT: each pass takes a transaction id and ends its transaction,
    // thousands a second, without a round trip each.
    await client.query(`CREATE OR REPLACE PROCEDURE pg_temp.burn_xids(target bigint)
      LANGUAGE plpgsql AS $$
      BEGIN
        WHILE pg_current_xact_id()::text::bigint < target - 1 LOOP COMMIT; END LOOP;
      END $$`);
    await client.query("CALL pg_temp.burn_xids($1)", [next.toString()]);
  } finally {
    client.release();
  }
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
  options: { migrated?: boolean; server?: string } = {},
): Promise<TestDatabase> {
  const admin = options.server ?? (await adminUrl());
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
