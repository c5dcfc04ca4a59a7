import { withTransaction, type Pool, type PoolClient } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";
import { eventsOfTypes } from "../events/index.ts";
import {
  START,
  comparePositions,
  countAfter,
  beginLogReader,
  readAll,
  type LogPosition,
  type RecordedEvent,
} from "../store/index.ts";
import {
  applyBatch,
  applyEvents,
  flushStreamVersions,
  inStreamOrder,
  lockProjection,
  streamVersions,
  writeCheckpoint,
  type StreamVersions,
} from "./apply-batch.ts";
import {
  createProjectionIndexes,
  createProjectionSchema,
  quoteIdentifier,
  schemaExists,
  schemaNames,
  tableIn,
} from "./schema.ts";
import { HeldRows } from "./replay-copy.ts";
import type { AnyProjection } from "./types.ts";

/**
 * How many rows a set-wise replay (`Projection.replay`) holds in memory before it writes them:
 * the fewer writes, the fewer merges (a table's first write is a plain COPY).
 */
const FOLD_ROWS = 50_000;

export interface RebuildOptions {
  readonly pool: Pool;
  readonly projection: AnyProjection;
  /** Called after every batch with the events done and the events to do in all. */
  readonly onProgress?: (done: number, total: number) => void;
  readonly batchSize?: number;
  /** Rows a set-wise replay holds before it writes them (`FOLD_ROWS`); tests set fewer. */
  readonly foldRows?: number;
}

/**
 * Rebuilds a projection side by side: replays the whole log into a shadow schema while the
 * live tables keep serving reads (and keep being updated by a running projector), then, under
 * the projection's lock, applies what arrived meanwhile and swaps the shadow in by renaming
 * schemas in one transaction. Readers see the old tables or the new ones, never a mix.
 */
export async function rebuildProjection(options: RebuildOptions): Promise<void> {
  const { pool, projection } = options;
  const batchSize = options.batchSize ?? 2000;
  const names = schemaNames(projection.name);
  const guard = await pool.connect();
  try {
    // One rebuild of a projection at a time, across processes.
    const locked = await guard.query<{ ok: boolean }>(
      "SELECT pg_try_advisory_lock(hashtext($1)) AS ok",
      [`annal-rebuild:${projection.name}`],
    );
    if (!locked.rows[0]?.ok) {
      throw new AnnalError(
        "ANNAL_REPLAY_IN_PROGRESS",
        `projection ${projection.name} is already being rebuilt by another process`,
        { status: 409, hint: "wait for that rebuild to finish" },
      );
    }
    await withTransaction(pool, async (tx) => {
      await tx.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(names.shadow)} CASCADE`);
      await tx.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(names.old)} CASCADE`);
      await createProjectionSchema(tx, names.shadow, projection, { indexes: false });
    });

    const total = await countAfter(pool, START);
    let done = 0;
    options.onProgress?.(done, total);
    // The shadow is new and only this rebuild writes it: its streams' versions stay in
    // memory and are written once, before the swap. A rebuild that dies leaves a shadow the
    // next one drops.
    const streams = streamVersions();
    done = await replayIntoShadow(
      pool,
      projection,
      names.shadow,
      batchSize,
      streams,
      (n) => options.onProgress?.(n, Math.max(total, n)),
      undefined,
      options.foldRows,
    );
    // Built once over the replayed rows rather than maintained row by row.
    await withTransaction(pool, async (tx) => {
      // Sorting in memory rather than in temporary files: 64 MB by default.
      await tx.query("SET LOCAL maintenance_work_mem = '256MB'");
      await createProjectionIndexes(tx, names.shadow, projection);
    });

    await withTransaction(pool, async (tx) => {
      // Stop the live projector between two of its batches, catch the shadow up to the very
      // end of the log, and swap.
      await lockProjection(tx, names.live);
      let applied: number;
      do {
        applied = await applyBatch(tx, projection, names.shadow, batchSize, { memory: streams });
        done += applied;
      } while (applied === batchSize);
      await flushStreamVersions(tx, names.shadow, streams);
      if (await schemaExists(tx, names.live)) {
        await tx.query(
          `ALTER SCHEMA ${quoteIdentifier(names.live)} RENAME TO ${quoteIdentifier(names.old)}`,
        );
      }
      await tx.query(
        `ALTER SCHEMA ${quoteIdentifier(names.shadow)} RENAME TO ${quoteIdentifier(names.live)}`,
      );
    });
    options.onProgress?.(done, done);
    // Dropping waits for readers still on the old tables; it is outside the swap so that the
    // swap itself stays short.
    await pool.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(names.old)} CASCADE`);
  } finally {
    await guard.query("SELECT pg_advisory_unlock(hashtext($1))", [
      `annal-rebuild:${projection.name}`,
    ]);
    guard.release();
  }
}

/**
 * Replays the log from its start into a new schema `schema` (dropped first if it is there),
 * with the code a rebuild uses, but swaps nothing: the live tables are left alone. With
 * `through`, it stops at that position (a live checkpoint read under the projection's lock),
 * so the scratch tables can be compared with the live ones row by row: invariant 1, checked.
 * The caller drops the schema when done.
 *
 * @example
 * await withTransaction(pool, async (tx) => {
 *   await lockProjection(tx, live);            // the projector waits between two batches
 *   const at = await readCheckpoint(tx, live);
 *   await replayInto({ pool, projection, schema: "scratch_entries", through: at });
 *   // compare "scratch_entries".* with the live tables here
 * });
 */
export async function replayInto(
  options: RebuildOptions & { readonly schema: string; readonly through?: LogPosition },
): Promise<number> {
  const { pool, projection, schema } = options;
  await withTransaction(pool, async (tx) => {
    await tx.query(`DROP SCHEMA IF EXISTS ${quoteIdentifier(schema)} CASCADE`);
    await createProjectionSchema(tx, schema, projection, { indexes: false });
  });
  const streams = streamVersions();
  const done = await replayIntoShadow(
    pool,
    projection,
    schema,
    options.batchSize ?? 2000,
    streams,
    (n) => options.onProgress?.(n, n),
    options.through,
    options.foldRows,
  );
  await withTransaction(pool, async (tx) => {
    await flushStreamVersions(tx, schema, streams);
    await createProjectionIndexes(tx, schema, projection);
  });
  return done;
}

/**
 * The bulk of a rebuild: the log up to its safe bound (or up to `through`), applied to the
 * shadow in batches, one transaction each (a transaction over the whole replay would hold
 * back every reader of the log). Returns the events applied.
 *
 * The next batch is read on another connection while this one is applied, since the log
 * below the safe bound does not change. A rebuild that dies is not resumed (its shadow is
 * dropped by the next one), so nothing here needs to survive a crash: the batches commit
 * without waiting for the WAL flush, and the checkpoint is written once, at the end; the swap
 * does wait for its flush.
 *
 * The shadow's tables are new, so PostgreSQL has no statistics of them, and autovacuum does
 * not come by within a replay: a projection's statements would be planned for empty tables
 * all along (a lookup by key planned as a sequential scan, once per batch, over a table that
 * keeps growing). So the shadow is analyzed after the 1st, 2nd, 4th, 8th... batch: whenever
 * it has about doubled.
 */
async function replayIntoShadow(
  pool: Pool,
  projection: AnyProjection,
  shadow: string,
  batchSize: number,
  streams: StreamVersions,
  progress: (done: number) => void,
  through?: LogPosition,
  foldRows = FOLD_ROWS,
): Promise<number> {
  if (projection.replay) {
    return foldIntoShadow(
      pool,
      projection,
      shadow,
      batchSize,
      streams,
      progress,
      through,
      foldRows,
    );
  }
  const client = await pool.connect();
  let done = 0;
  let batches = 0;
  let last: RecordedEvent | undefined;
  try {
    await client.query("SET synchronous_commit = off");
    let next = readAhead(pool, START, batchSize);
    for (;;) {
      const read = await next;
      const events =
        through === undefined ? read : read.filter((e) => comparePositions(e, through) <= 0);
      if (events.length === 0) break;
      last = events.at(-1)!;
      await beginLogReader(client);
      // The next batch is asked for once this one's statements are on their way: its rows
      // arrive, and are decoded, while PostgreSQL applies this one. Asked for before the
      // BEGIN, they arrived while the BEGIN's answer was awaited, and the decoding held that
      // answer back (2 ms a batch, a quarter of a simple projection's replay).
      const applying = applyEvents(client, projection, shadow, events, streams);
      next = events.length === batchSize ? readAhead(pool, last, batchSize) : Promise.resolve([]);
      await applying;
      await client.query("COMMIT");
      done += events.length;
      batches++;
      if ((batches & (batches - 1)) === 0) await analyzeSchema(client, shadow);
      progress(done);
    }
    if (last) await writeCheckpoint(client, shadow, last);
    await client.query("RESET synchronous_commit");
    client.release();
    return done;
  } catch (error) {
    // Its transaction and its session setting go with it.
    client.release(true);
    throw error;
  }
}

/**
 * `replayIntoShadow` for a projection with a set-wise replay (`Projection.replay`): the log's
 * batches are folded in memory (`ReplayPlan.fold`) and written every `FOLD_ROWS` rows held, and
 * at the end, by COPY (`HeldRows.write`), one transaction each; then `ReplayPlan.finish`, and
 * the new tables are analyzed. No transaction is open while the log is read and folded. The
 * next batch is read while one is folded and, now and then, written.
 */
async function foldIntoShadow(
  pool: Pool,
  projection: AnyProjection,
  shadow: string,
  batchSize: number,
  streams: StreamVersions,
  progress: (done: number) => void,
  through: LogPosition | undefined,
  foldRows: number,
): Promise<number> {
  const plan = projection.replay!;
  const handled = new Set<string>(projection.handles);
  const rows = new HeldRows(plan);
  const client = await pool.connect();
  let done = 0;
  let writes = 0;
  let last: RecordedEvent | undefined;
  const write = async () => {
    // The merges of the 2nd, 3rd, 5th, 9th... write are planned with the tables' statistics,
    // as the batches of `replayIntoShadow` are.
    if (writes > 0 && (writes & (writes - 1)) === 0) await analyzeSchema(client, shadow);
    await beginLogReader(client);
    await rows.write(client, shadow);
    await client.query("COMMIT");
    writes++;
  };
  try {
    await client.query("SET synchronous_commit = off");
    let next = readAhead(pool, START, batchSize);
    for (;;) {
      const read = await next;
      const events =
        through === undefined ? read : read.filter((e) => comparePositions(e, through) <= 0);
      if (events.length === 0) break;
      last = events.at(-1)!;
      next = events.length === batchSize ? readAhead(pool, last, batchSize) : Promise.resolve([]);
      const ordered = await inStreamOrder(pool, events, streams.versions);
      for (const event of ordered) streams.dirty.add(event.streamId);
      plan.fold(eventsOfTypes(ordered, handled), rows);
      if (rows.size >= foldRows) await write();
      done += events.length;
      progress(done);
    }
    if (rows.size > 0) await write();
    await withTransaction(pool, async (tx) => {
      if (plan.finish) {
        await tx.query("SET LOCAL maintenance_work_mem = '256MB'");
        await plan.finish({ tx, table: tableIn(shadow) });
      }
      if (last) await writeCheckpoint(tx, shadow, last);
    });
    // The readers' statistics, of the tables as the replay leaves them (`finish`'s included).
    await analyzeSchema(client, shadow);
    await client.query("RESET synchronous_commit");
    client.release();
    return done;
  } catch (error) {
    client.release(true);
    throw error;
  }
}

/** Gathers the planner's statistics of every table in `schema`. */
async function analyzeSchema(client: PoolClient, schema: string): Promise<void> {
  const tables = await client.query<{ name: string }>(
    "SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname = $1",
    [schema],
  );
  for (const { name } of tables.rows) await client.query(`ANALYZE ${name}`);
}

/** `readAll`, started now and awaited later: a failure is kept for that await. */
function readAhead(pool: Pool, after: LogPosition, limit: number): Promise<RecordedEvent[]> {
  const page = readAll(pool, after, limit);
  page.catch(() => {}); // not unhandled while the current batch is applied; its await rethrows
  return page;
}
