import t from "tap";
import { Projector, schemaNames } from "../../src/projector/index.ts";
import { allProjections } from "../../projections/index.ts";
import { quietLog } from "../support/capture.ts";
import { testDatabase } from "../support/postgres.ts";

t.test("the large projection tables are vacuumed after 1% of their rows changed", async (t) => {
  const { pool } = await testDatabase(t);
  const projector = await Projector.start({ pool, projections: allProjections, log: quietLog });
  await projector.stop();
  const tables = [
    [schemaNames("entries").live, "entries"],
    [schemaNames("entries").live, "entry_values"],
    [schemaNames("entry_versions").live, "entry_versions"],
    [schemaNames("entry_versions").live, "entry_version_values"],
  ];
  for (const [schema, table] of tables) {
    const result = await pool.query<{ options: string[] | null }>(
      `SELECT c.reloptions AS options FROM pg_class AS c
         JOIN pg_namespace AS n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relname = $2`,
      [schema, table],
    );
    t.same(
      [...(result.rows[0]?.options ?? [])].sort(),
      [
        "autovacuum_analyze_scale_factor=0.02",
        "autovacuum_vacuum_insert_scale_factor=0.01",
        "autovacuum_vacuum_scale_factor=0.01",
      ],
      `${table}: its autovacuum thresholds`,
    );
  }
});
