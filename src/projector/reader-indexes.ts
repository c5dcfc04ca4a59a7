import type { Logger } from "pino";
import { sideConnection, trySessionLock, type Pool, type Queryable } from "../db/index.ts";
import { pausePoint } from "../pause-points.ts";
import { quoteIdentifier, schemaExists, tableIn } from "./schema.ts";
import type { AnyProjection } from "./types.ts";

/** One of a projection's readers' indexes (`Projection.indexes`), by the name it gives it. */
export interface ReaderIndex {
  readonly name: string;
  readonly statement: string;
  /** The table it indexes, as the statement names it (`"projection_entries"."entries"`). */
  readonly table: string;
}

const NAMED =
  /^\s*CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?([a-z_][a-z0-9_]*)\s+ON\s+([^\s(]+)/i;

/**
 * The projection's readers' indexes in `schema`, each by its name; undefined when one of them
 * has none (`CREATE INDEX ON …`): only indexes known by name can be found missing, so a
 * projection's readers' indexes are built after a first start's load only when all are named.
 */
export function readerIndexesOf(
  projection: AnyProjection,
  schema: string,
): ReaderIndex[] | undefined {
  const statements = projection.indexes?.(tableIn(schema)) ?? [];
  const indexes: ReaderIndex[] = [];
  for (const statement of statements) {
    const [, name, table] = NAMED.exec(statement) ?? [];
    if (!name || !table) return undefined;
    indexes.push({ name: name.toLowerCase(), statement, table });
  }
  return indexes;
}

/** What a schema lacks of its readers' indexes: those not there, and those there but invalid. */
export interface MissingReaderIndexes {
  readonly missing: readonly ReaderIndex[];
  /** Indexes of the schema that PostgreSQL marks invalid (a concurrent build that died). */
  readonly invalid: readonly string[];
}

/**
 * The readers' indexes `schema` lacks, and its invalid indexes: a build with `CREATE INDEX
 * CONCURRENTLY` that was cancelled or whose process died leaves its index INVALID (never used
 * by a plan, yet maintained by every write), a build that never started leaves none. Nothing
 * when the schema does not exist.
 */
export async function missingReaderIndexes(
  db: Queryable,
  schema: string,
  indexes: readonly ReaderIndex[],
): Promise<MissingReaderIndexes> {
  if (!(await schemaExists(db, schema))) return { missing: [], invalid: [] };
  const result = await db.query<{ name: string; valid: boolean }>(
    `SELECT c.relname AS name, i.indisvalid AS valid
       FROM pg_index AS i
       JOIN pg_class AS c ON c.oid = i.indexrelid
       JOIN pg_namespace AS n ON n.oid = c.relnamespace
      WHERE n.nspname = $1`,
    [schema],
  );
  const valid = new Set(result.rows.filter((row) => row.valid).map((row) => row.name));
  return {
    missing: indexes.filter((index) => !valid.has(index.name)),
    invalid: result.rows.filter((row) => !row.valid).map((row) => row.name),
  };
}

/** The session lock of the readers' index builds (`buildReaderIndexes`): one in the database. */
export const READER_INDEX_LOCK = "annal-indexes";

export type ReaderIndexBuild =
  /** Every readers' index is there and valid (nothing was missing, or it was built now). */
  | "complete"
  /** Another process holds the build's lock: it builds them, or the next check will. */
  | "busy";

/**
 * Builds the readers' indexes that the live `schema` of `projection` lacks, with `CREATE
 * INDEX CONCURRENTLY` on a connection of its own, outside any transaction: the projection
 * serves and tails the log meanwhile (its searches are slower without them, not wrong). A
 * first start's bulk load leaves them to this (`applyFirstSnapshotsInBulk`), and so does a
 * build that was cancelled or whose process died, which left an index INVALID or none: the
 * projector checks at start and now and then (`Projector`).
 *
 * One build at a time in the database: the holder of the session lock `READER_INDEX_LOCK`
 * builds, the others get `"busy"` and check again later (a holder that dies lets the lock go).
 * Two concurrent builds, even in two schemas, would each wait at their end for the other's
 * snapshot (bench/RESULTS.md, the soak). Under the lock, an invalid index of the schema is one
 * that no build is making any more: it is dropped and built again. A side-by-side rebuild that
 * swaps schemas meanwhile is harmless: a build under way finishes on the tables it started on
 * (by then the old schema, dropped after), and `IF NOT EXISTS` skips the indexes the new live
 * schema came with.
 *
 * `running` is told the build's backend process id, so that a stop can cancel it
 * (`pg_cancel_backend`), leaving an invalid index for the next check; once `signal` is
 * aborted, no further statement starts.
 */
export async function buildReaderIndexes(options: {
  readonly pool: Pool;
  readonly projection: AnyProjection;
  readonly schema: string;
  readonly log: Pick<Logger, "info">;
  /** Aborted: no further statement is started (the one under way is cancelled by `running`'s user). */
  readonly signal?: AbortSignal;
  readonly running?: (pid: number | undefined) => void;
}): Promise<ReaderIndexBuild> {
  const { pool, projection, schema, log } = options;
  const indexes = readerIndexesOf(projection, schema);
  if (!indexes || indexes.length === 0) return "complete";
  const before = await missingReaderIndexes(pool, schema, indexes);
  if (before.missing.length === 0 && before.invalid.length === 0) return "complete";

  await pausePoint("projector.indexes.beforeBuild", projection.name);
  const lock = await trySessionLock(pool, READER_INDEX_LOCK);
  if (!lock) return "busy";
  const client = sideConnection(pool, "annal-index-builder");
  // A connection that breaks fails the statement under way; the next check builds again.
  client.on("error", () => {});
  try {
    await client.connect();
    const pid = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    options.running?.(pid.rows[0]?.pid);
    // Read again under the lock: the previous holder may have finished meanwhile.
    const { missing, invalid } = await missingReaderIndexes(client, schema, indexes);
    if (missing.length === 0 && invalid.length === 0) return "complete";
    const started = performance.now();
    log.info(
      { projection: projection.name, indexes: missing.map((index) => index.name), invalid },
      "building the readers' indexes",
    );
    // Sorting in memory rather than in temporary files, as a rebuild does.
    await client.query("SET maintenance_work_mem = '256MB'");
    const stopped = () => {
      if (options.signal?.aborted) throw new Error("the readers' index build was stopped");
    };
    for (const name of invalid) {
      stopped();
      await client.query(
        `DROP INDEX CONCURRENTLY IF EXISTS ${quoteIdentifier(schema)}.${quoteIdentifier(name)}`,
      );
    }
    for (const index of missing) {
      stopped();
      await client.query(concurrently(index.statement));
    }
    // The planner knows an index expression's values (a sort pair's sort values: how many
    // entries share one) only once ANALYZE has read them: until the table's next automatic
    // ANALYZE it takes an equality on one for 1/200 of the table, and may sort a group of a
    // sorted page rather than read it in the index's order.
    for (const table of new Set(missing.map((index) => index.table))) {
      stopped();
      await client.query(`ANALYZE ${table}`);
    }
    log.info(
      {
        projection: projection.name,
        indexes: missing.length,
        seconds: Math.round(performance.now() - started) / 1000,
      },
      "readers' indexes built",
    );
    return "complete";
  } finally {
    options.running?.(undefined);
    await client.end().catch(() => {});
    await lock.release();
  }
}

/** `CREATE INDEX name ON …` as `CREATE INDEX CONCURRENTLY IF NOT EXISTS name ON …`. */
function concurrently(statement: string): string {
  return statement.replace(
    /^\s*CREATE\s+(UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?/i,
    (_, unique: string | undefined) => `CREATE ${unique ?? ""}INDEX CONCURRENTLY IF NOT EXISTS `,
  );
}
