import { withTransaction, type Pool } from "../../src/db/index.ts";
import {
  lockProjection,
  readCheckpoint,
  replayInto,
  schemaNames,
  tableIn,
  type AnyProjection,
} from "../../src/projector/index.ts";

/** How a live table differs from the same table replayed from the log. */
export interface TableDifference {
  readonly table: string;
  readonly liveRows: number;
  readonly replayedRows: number;
  /** Rows in one and not the other (as JSON), a few of each. */
  readonly onlyLive: readonly unknown[];
  readonly onlyReplayed: readonly unknown[];
}

/**
 * Invariant 1 under a running projector: replays the whole log into a scratch schema with the
 * projector's own replay code (`replayInto`) up to the live tables' checkpoint, and compares
 * every table (the projection's own and `_streams`) row set by row set with the live one.
 *
 * The projection's lock is held meanwhile, so the live tables stay at that checkpoint (the
 * projector waits between two batches); the lock takes no transaction id, so it holds back
 * no reader of the log. Returns the tables that differ (none when the invariant holds) and
 * how many events the replay applied. `options` are the replay's (`RebuildOptions`).
 */
export async function compareWithReplay(
  pool: Pool,
  projection: AnyProjection,
  options: { readonly batchSize?: number; readonly foldRows?: number } = {},
): Promise<{ events: number; tables: number; differences: TableDifference[] }> {
  const live = schemaNames(projection.name).live;
  const scratch = `replay_check_${projection.name}`;
  try {
    return await withTransaction(pool, async (tx) => {
      await lockProjection(tx, live);
      const checkpoint = await readCheckpoint(tx, live);
      if (!checkpoint) throw new Error(`projection ${projection.name} has no live tables`);
      const events = await replayInto({
        pool,
        projection,
        schema: scratch,
        through: checkpoint,
        ...options,
      });
      const { rows: tables } = await tx.query<{ name: string }>(
        `SELECT tablename AS name FROM pg_tables
          WHERE schemaname = $1 AND tablename <> '_checkpoint' ORDER BY 1`,
        [scratch],
      );
      const differences: TableDifference[] = [];
      for (const { name } of tables) {
        const a = tableIn(live)(name);
        const b = tableIn(scratch)(name);
        // Multisets of whole rows: jsonb has equality for every column type (json has not).
        const { rows } = await tx.query<{
          live_rows: number;
          replayed_rows: number;
          only_live: unknown[] | null;
          only_replayed: unknown[] | null;
        }>(
          `SELECT (SELECT count(*)::int FROM ${a}) AS live_rows,
                  (SELECT count(*)::int FROM ${b}) AS replayed_rows,
                  (SELECT jsonb_agg(r) FROM (SELECT to_jsonb(x) AS r FROM ${a} x
                     EXCEPT ALL SELECT to_jsonb(y) FROM ${b} y LIMIT 3) d) AS only_live,
                  (SELECT jsonb_agg(r) FROM (SELECT to_jsonb(y) AS r FROM ${b} y
                     EXCEPT ALL SELECT to_jsonb(x) FROM ${a} x LIMIT 3) d) AS only_replayed`,
        );
        const row = rows[0]!;
        if (row.only_live !== null || row.only_replayed !== null) {
          differences.push({
            table: name,
            liveRows: row.live_rows,
            replayedRows: row.replayed_rows,
            onlyLive: row.only_live ?? [],
            onlyReplayed: row.only_replayed ?? [],
          });
        }
      }
      return { events, tables: tables.length, differences };
    });
  } finally {
    await pool.query(`DROP SCHEMA IF EXISTS "${scratch}" CASCADE`);
  }
}
