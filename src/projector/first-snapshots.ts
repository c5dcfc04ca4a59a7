import type { PoolClient } from "../db/index.ts";
import { ENTRY_EVENT } from "../events/index.ts";
import {
  belowSafeBound,
  logOrder,
  logPositionColumns,
  logPositionCompare,
  logPositionOf,
  logPositionsCompare,
  type LogPosition,
  type LogPositionRow,
  type RecordedEvent,
} from "../store/index.ts";
import { readerIndexesOf } from "./reader-indexes.ts";
import { quoteIdentifier, tableIn } from "./schema.ts";
import type { AnyProjection, FirstSnapshots } from "./types.ts";

export interface FirstSnapshotsOptions {
  /** Events a projection's `applyFirstSnapshots` is given at a time (its statements' size). */
  readonly chunk?: number;
  /**
   * Bytes of snapshot data (as stored: `pg_column_size`) a chunk holds at most besides its
   * last event; an event larger than this ends a chunk of its own. A group of many members
   * then does not make a chunk of `chunk` events many times its usual size, in the work
   * memory of each statement that spreads the chunk's values. Default `CHUNK_BYTES`.
   */
  readonly chunkBytes?: number;
  /**
   * From how many events on the readers' indexes (`Projection.indexes`, all named) are
   * dropped before the load, when the projection's tables hold no rows yet; 0: never. They are
   * built after its commit, while the projection serves (`buildReaderIndexes`).
   */
  readonly indexesAfter?: number;
}

/** What a bulk build did, and where its time went. */
export interface FirstSnapshotsOutcome {
  readonly events: number;
  /** The chunks the run was written in (`chunk`, `chunkBytes`). */
  readonly chunks: number;
  readonly through: LogPosition;
  /** Writing the projection's rows (and `_streams`), in milliseconds. */
  readonly applyMs: number;
  /**
   * The readers' indexes dropped before the load (0 when they were kept): the caller builds
   * them once the load has committed (`buildReaderIndexes`).
   */
  readonly indexesDropped: number;
}

/**
 * A bulk chunk's bytes of stored snapshot data (`FirstSnapshotsOptions.chunkBytes`): 20,000
 * people of 1.5 KB hold 30 MB, so only chunks with a huge entry in them are cut by it.
 */
const CHUNK_BYTES = 32 * 1024 * 1024;

/** A first snapshot: an entry's snapshot that opens its stream (version 1). */
export const isFirstSnapshot = (event: RecordedEvent): boolean =>
  event.type === ENTRY_EVENT.snapshot && event.streamVersion === 1;

/**
 * Applies the run of first snapshots that follows `checkpoint` in the log set-wise,
 * in `tx`, which holds the projection's lock and is marked a log reader; the caller moves the
 * checkpoint to the outcome's `through`. The first
 * start's import, which the projections would otherwise apply batch by batch, each snapshot
 * parsed in JS and written back as JSON by every projection.
 *
 * Equal to applying the same events one batch after another (test/projector/first-snapshots
 * compares both with a replay): each event opens its stream, so no projection has seen the
 * entry before, and a projection's `applyFirstSnapshots` writes what its `apply` would write
 * for an entry's first event. The run ends before the first event in log order that is not a
 * first snapshot, and at the safe bound, both read in one statement. A stream of the run that
 * `_streams` knows (a later version applied first pulled it in) leaves it to the batches, as
 * does a projection that handles snapshots without `applyFirstSnapshots`. Returns undefined
 * when nothing was done.
 *
 * When the projection's tables hold no rows yet and the run is long, its readers' indexes are
 * dropped first, which is cheaper than maintaining them row by row (bench/RESULTS.md, first
 * start), and left to the caller to build after the commit (`indexesDropped`): built in this
 * transaction, they kept every reader of the projection waiting for all of it (the readers
 * wait for the transaction as it is: its DROP INDEX locks the tables).
 */
export async function applyFirstSnapshotsInBulk(
  tx: PoolClient,
  projection: AnyProjection,
  schema: string,
  checkpoint: LogPosition,
  options: FirstSnapshotsOptions = {},
): Promise<FirstSnapshotsOutcome | undefined> {
  const handles = projection.handles.includes(ENTRY_EVENT.snapshot);
  if (handles && !projection.applyFirstSnapshots) return undefined;
  const chunk = options.chunk ?? 20_000;
  const table = tableIn(schema);
  const started = performance.now();

  const chunkBytes = options.chunkBytes ?? CHUNK_BYTES;
  const ends = await chunkEnds(tx, checkpoint, chunk, chunkBytes);
  const through = ends.at(-1);
  if (!through) return undefined;
  const all = range(checkpoint, through.position, true, true);
  const params: unknown[] = [];
  const known = await tx.query(
    `SELECT 1 FROM ${all.from(params)}
        AND EXISTS (SELECT 1 FROM ${table("_streams")} AS s WHERE s.stream_id = e.stream_id)
      LIMIT 1`,
    params,
  );
  if ((known.rowCount ?? 0) > 0) return undefined;

  const fresh = await holdsNoRows(tx, schema);
  // Only indexes known by name can be found missing afterwards (`buildReaderIndexes`).
  const readers = readerIndexesOf(projection, schema);
  const dropIndexes =
    handles &&
    fresh &&
    !!readers?.length &&
    !!options.indexesAfter &&
    through.events >= options.indexesAfter;
  if (dropIndexes) {
    for (const index of readers!) {
      await tx.query(
        `DROP INDEX IF EXISTS ${quoteIdentifier(schema)}.${quoteIdentifier(index.name)}`,
      );
    }
  }

  // A chunk's statements sort and hash its values (about 30 of each of 20,000 entries): in
  // memory rather than in temporary files (the 4 MB default spilled them at 10,000 entries).
  await tx.query("SET LOCAL work_mem = '32MB'");
  let after = checkpoint;
  for (const end of ends) {
    const run = range(after, end.position, after === checkpoint, end === ends.at(-1));
    const streams: unknown[] = [];
    await tx.query(
      `INSERT INTO ${table("_streams")} (stream_id, version)
       SELECT e.stream_id, e.stream_version FROM ${run.from(streams)}`,
      streams,
    );
    await projection.applyFirstSnapshots?.(run, { tx, table });
    after = end.position;
  }
  if (handles) await analyzeSchema(tx, schema);
  return {
    events: through.events,
    chunks: ends.length,
    through: through.position,
    applyMs: performance.now() - started,
    indexesDropped: dropIndexes ? readers!.length : 0,
  };
}

/**
 * The run of first snapshots after `checkpoint`, cut into chunks of at most `chunk` events
 * and about `chunkBytes` of stored data: each cut's last position and the events up to it.
 * Empty when the next event is not a first snapshot.
 *
 * Both bounds in one pass of window sums: an event weighs the larger of its share of either
 * bound (`chunkBytes` for one event in `chunk`, its bytes times `chunk` for its size), and a
 * chunk ends where the running weight crosses a multiple of `chunk × chunkBytes`. A chunk so
 * holds at most `chunk` events and `chunkBytes` bytes before its last event, and an event
 * larger than the bound ends the chunk it is in. `pg_column_size` reads the stored size
 * (compressed, or the TOAST pointer's) without reading the value.
 */
async function chunkEnds(
  tx: PoolClient,
  checkpoint: LogPosition,
  chunk: number,
  chunkBytes: number,
): Promise<{ position: LogPosition; events: number }[]> {
  const params: unknown[] = [];
  const after = logPositionCompare("e", ">", checkpoint, params);
  params.push(ENTRY_EVENT.snapshot, chunk, chunkBytes);
  const snapshot = `$${params.length - 2}`;
  const events = `$${params.length - 1}::numeric`;
  const bytes = `$${params.length}::numeric`;
  // The stop and the run are read in one statement, so under one safe bound: a transaction
  // that commits meanwhile cannot add an event to the run that was not checked. The weights
  // are made before the windows sort them: inlined, the sort carried each event's data (the
  // weight was computed above it), 160 MB spilled to disk at 100,000 entries and 3.3 s
  // instead of 0.9 for each projection.
  const result = await tx.query<LogPositionRow & { n: string }>(
    `WITH stop AS (
       SELECT e.transaction_id, e.position FROM events AS e
        WHERE ${after} AND ${belowSafeBound("e")}
          AND NOT (e.type = ${snapshot} AND e.stream_version = 1)
        ORDER BY ${logOrder("e")} LIMIT 1),
          weighed AS MATERIALIZED (
       SELECT e.transaction_id, e.position,
              greatest(${bytes}, pg_column_size(e.data)::numeric * ${events}) AS weight
         FROM events AS e
        WHERE ${after} AND ${belowSafeBound("e")}
          AND NOT EXISTS (SELECT 1 FROM stop AS s WHERE ${logPositionsCompare("s", "<=", "e")})),
          run AS (
       SELECT w.transaction_id, w.position, w.weight,
              row_number() OVER (ORDER BY ${logOrder("w")}) AS n, count(*) OVER () AS total,
              sum(w.weight) OVER (ORDER BY ${logOrder("w")}) AS reached
         FROM weighed AS w)
     SELECT ${logPositionColumns("run")}, run.n::text AS n FROM run
      WHERE div(run.reached, ${events} * ${bytes}) > div(run.reached - run.weight, ${events} * ${bytes})
         OR run.n = run.total
      ORDER BY run.n`,
    params,
  );
  return result.rows.map((row) => ({ position: logPositionOf(row), events: Number(row.n) }));
}

/** The events after `after` up to and including `through`, as `FirstSnapshots`. */
function range(
  after: LogPosition,
  through: LogPosition,
  first: boolean,
  last: boolean,
): FirstSnapshots {
  return {
    first,
    last,
    from(params) {
      const from = logPositionCompare("e", ">", after, params);
      const to = logPositionCompare("e", "<=", through, params);
      return `events AS e WHERE ${from} AND ${to}`;
    },
  };
}

/**
 * Whether the projection's own tables in `schema` are all empty: it has applied nothing of
 * its own yet (events of other kinds before the import, a token made first, leave its tables
 * empty, though `_streams` knows their streams).
 */
async function holdsNoRows(tx: PoolClient, schema: string): Promise<boolean> {
  const tables = await tx.query<{ name: string }>(
    `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
      WHERE schemaname = $1 AND tablename NOT IN ('_checkpoint', '_streams')`,
    [schema],
  );
  for (const { name } of tables.rows) {
    if (((await tx.query(`SELECT 1 FROM ${name} LIMIT 1`)).rowCount ?? 0) > 0) return false;
  }
  return true;
}

/**
 * The planner's statistics of what a bulk load wrote, gathered before it commits (ANALYZE
 * samples the rows its own transaction inserted): planned without them until autovacuum came
 * by, a search at a moment was a nested loop re-reading an index per entry (0.9 s at 2,000
 * people against 2 ms with them, bench/RESULTS.md's GraphQL section), and at a million entries
 * the wait for autovacuum is long.
 */
async function analyzeSchema(tx: PoolClient, schema: string): Promise<void> {
  const tables = await tx.query<{ name: string }>(
    `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname = $1`,
    [schema],
  );
  for (const { name } of tables.rows) await tx.query(`ANALYZE ${name}`);
}
