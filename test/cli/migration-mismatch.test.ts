import t from "tap";
import { keyOf, knownMigrations, type Pool } from "../../src/db/index.ts";
import { freePort } from "../../src/ports.ts";
import { testDatabase } from "../support/postgres.ts";
import { configDir, runAnnal } from "./support.ts";

/** What must not change: the recorded migrations, the schemas and the tables. */
async function snapshot(pool: Pool) {
  const migrations = await pool.query(
    "SELECT id, name, hash, executed_at FROM migrations ORDER BY id",
  );
  const tables = await pool.query(
    `SELECT table_schema, table_name FROM information_schema.tables
      WHERE table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1, 2`,
  );
  const schemas = await pool.query("SELECT nspname FROM pg_namespace ORDER BY 1");
  return { migrations: migrations.rows, tables: tables.rows, schemas: schemas.rows };
}

t.test(
  "annal start on a database from a newer annal exits non-zero and changes nothing",
  async (t) => {
    const { url, pool } = await testDatabase(t);
    await pool.query("INSERT INTO migrations (id, name, hash) VALUES (99, 'from-the-future', 'x')");
    const before = await snapshot(pool);
    const newestKnown = keyOf((await knownMigrations()).at(-1)!);
    const { dir } = await configDir(t, "");

    const run = await runAnnal(["start"], {
      cwd: dir,
      env: { DATABASE_URL: url, PORT: String(await freePort()) },
    });

    t.equal(run.code, 1);
    t.match(run.stderr, /^annal: WF_DATABASE_MIGRATION_MISMATCH: .+\nannal: hint: .+\n$/);
    t.match(run.stderr, "99_from-the-future");
    t.match(run.stderr, newestKnown);
    const logged = run.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    t.match(
      logged.find((line) => line.code === "WF_DATABASE_MIGRATION_MISMATCH"),
      { level: "fatal", recordedKey: "99_from-the-future", newestKnownKey: newestKnown },
    );
    t.same(await snapshot(pool), before);
  },
);
