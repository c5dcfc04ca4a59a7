import type { Pool } from "../../src/db/index.ts";

/** One sample of the soak, taken every `--every`. */
export interface SoakSample {
  /** Minutes since the steady load began. */
  readonly minute: number;
  readonly at: string;
  /** Directory changes made in the window, and how many capture recorded in it. */
  readonly writes: number;
  readonly captured: number;
  /** From a change's ldapmodify answer to its event in the log, over the window (ms). */
  readonly captureLagP99Ms: number;
  readonly captureLagMaxMs: number;
  /** REST reads in the window and their latencies (ms). */
  readonly restReads: number;
  readonly restP99Ms: number;
  /** REST and workflow requests that failed in the window. */
  readonly errors: number;
  /** Workflow instances completed in the window. */
  readonly workflowsCompleted: number;
  /** RSS (annal's processes, slapd) and PSS (PostgreSQL, all its processes) in MiB. */
  readonly memoryMiB: Record<string, number>;
  /** PostgreSQL's `pg_database_size`, MiB. */
  readonly databaseMiB: number;
  /** Every user table's heap (with TOAST) and its indexes, MiB. */
  readonly tablesMiB: number;
  readonly indexesMiB: number;
  /** Dead tuples of all tables, and their share of all tuples (the bloat autovacuum owes). */
  readonly deadTuples: number;
  readonly deadShare: number;
  /** The log's last position (about its events: positions are a sequence). */
  readonly events: number;
  /** The tables with the most dead tuples, for the JSON only. */
  readonly worstTables: readonly {
    table: string;
    live: number;
    dead: number;
    mib: number;
    lastAutovacuum: string | null;
  }[];
}

/** The database's size, its tables' and indexes' sizes and their dead tuples (no pgstattuple). */
export async function databaseFigures(pool: Pool) {
  const { rows } = await pool.query<{
    database: string;
    tables: string;
    indexes: string;
    live: string;
    dead: string;
    events: string;
  }>(
    `SELECT pg_database_size(current_database()) AS database,
            sum(pg_table_size(relid)) AS tables,
            sum(pg_indexes_size(relid)) AS indexes,
            sum(n_live_tup) AS live, sum(n_dead_tup) AS dead,
            (SELECT coalesce(max(position), 0) FROM events) AS events
       FROM pg_stat_user_tables`,
  );
  const worst = await pool.query<{
    table: string;
    live: string;
    dead: string;
    bytes: string;
    last_autovacuum: Date | null;
  }>(
    `SELECT schemaname || '.' || relname AS table, n_live_tup AS live, n_dead_tup AS dead,
            pg_total_relation_size(relid) AS bytes, last_autovacuum
       FROM pg_stat_user_tables ORDER BY n_dead_tup DESC LIMIT 5`,
  );
  const row = rows[0]!;
  const live = Number(row.live);
  const dead = Number(row.dead);
  return {
    databaseMiB: mib(row.database),
    tablesMiB: mib(row.tables),
    indexesMiB: mib(row.indexes),
    deadTuples: dead,
    deadShare: live + dead === 0 ? 0 : Math.round((dead / (live + dead)) * 1000) / 1000,
    events: Number(row.events),
    worstTables: worst.rows.map((r) => ({
      table: r.table,
      live: Number(r.live),
      dead: Number(r.dead),
      mib: mib(r.bytes),
      lastAutovacuum: r.last_autovacuum?.toISOString() ?? null,
    })),
  };
}

const mib = (bytes: string | number) => Math.round((Number(bytes) / 1024 / 1024) * 10) / 10;

/** The `p` (0..1) quantile of `values` (0 for none). */
export function quantile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!);
}

/**
 * When capture recorded each soak write: the `title` values `soak-<n>` of EntryModified events
 * after `afterPosition` (minus a margin: a transaction may commit a lower position late),
 * with their `recorded_at`. The caller keeps the ones it has seen.
 */
export async function capturedWrites(
  pool: Pool,
  afterPosition: number,
): Promise<{ title: string; recordedAt: number; position: number }[]> {
  const { rows } = await pool.query<{ title: string; recorded_at: Date; position: string }>(
    `SELECT data->'after'->'attributes'->'title'->>0 AS title, recorded_at, position
       FROM events
      WHERE position > $1 AND type = 'EntryModified'
        AND data->'after'->'attributes'->'title'->>0 LIKE 'soak-%'`,
    [Math.max(0, afterPosition - 5000)],
  );
  return rows.map((r) => ({
    title: r.title,
    recordedAt: r.recorded_at.getTime(),
    position: Number(r.position),
  }));
}
