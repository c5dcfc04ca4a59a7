import type { Queryable } from "../db/index.ts";
import {
  logPositionColumns,
  logPositionOf,
  START,
  type LogPosition,
  type LogPositionRow,
} from "../store/index.ts";
import type { AnyProjection } from "./types.ts";

const NAME = /^[a-z][a-z0-9_]{0,40}$/;

/** Quotes an identifier that our own code chose (never user input). */
export function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

export function assertProjectionName(name: string): void {
  if (!NAME.test(name)) {
    throw new Error(`projection name "${name}" must match ${NAME} (it names a schema)`);
  }
}

/** Where a projection's tables live: the live schema, a rebuild's shadow, a swapped-out one. */
export const schemaNames = (projection: string) => ({
  live: `projection_${projection}`,
  shadow: `projection_${projection}__rebuild`,
  old: `projection_${projection}__old`,
});

/** `table(name)` for a projection whose tables are in `schema`. */
export function tableIn(schema: string): (name: string) => string {
  return (name) => `${quoteIdentifier(schema)}.${quoteIdentifier(name)}`;
}

/**
 * A projection's live table, quoted and schema-qualified: what readers of the projection use.
 *
 * @example
 * export const ENTRIES = liveTable("entries", "entries"); // "projection_entries"."entries"
 */
export function liveTable(projection: string, name: string): string {
  return tableIn(schemaNames(projection).live)(name);
}

export interface Checkpoint extends LogPosition {
  readonly version: number;
}

/**
 * Creates `schema` with the projection's tables and its bookkeeping: `_checkpoint` (the
 * version the tables were built by and the last position applied, written in the same
 * transaction as every batch) and `_streams` (the last version applied per stream); and,
 * unless `indexes` is false, the readers' indexes.
 */
export async function createProjectionSchema(
  db: Queryable,
  schema: string,
  projection: AnyProjection,
  options: { readonly indexes?: boolean } = {},
): Promise<void> {
  const table = tableIn(schema);
  await db.query(`CREATE SCHEMA ${quoteIdentifier(schema)}`);
  await db.query(`CREATE TABLE ${table("_checkpoint")} (
      singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
      version integer NOT NULL,
      transaction_id xid8 NOT NULL,
      position bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now())`);
  await db.query(
    `INSERT INTO ${table("_checkpoint")} (version, transaction_id, position) VALUES ($1, $2, $3)`,
    [projection.version, START.transactionId, START.position],
  );
  await db.query(`CREATE TABLE ${table("_streams")} (
      stream_id text PRIMARY KEY,
      version bigint NOT NULL)`);
  for (const statement of projection.tables(table)) await db.query(statement);
  if (options.indexes !== false) await createProjectionIndexes(db, schema, projection);
}

/** The readers' indexes of the projection's tables in `schema` (`Projection.indexes`). */
export async function createProjectionIndexes(
  db: Queryable,
  schema: string,
  projection: AnyProjection,
): Promise<void> {
  for (const statement of projection.indexes?.(tableIn(schema)) ?? []) await db.query(statement);
}

export async function schemaExists(db: Queryable, schema: string): Promise<boolean> {
  const result = await db.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
  return (result.rowCount ?? 0) > 0;
}

export async function readCheckpoint(
  db: Queryable,
  schema: string,
): Promise<Checkpoint | undefined> {
  if (!(await schemaExists(db, schema))) return undefined;
  return checkpointIn(db, schema);
}

/**
 * `readCheckpoint` in one round trip instead of two, for a reader on every request: the
 * checkpoint is read straight away, and a schema that does not exist (not yet created, or
 * between a rebuild's drop and rename) fails the statement, which reads as no checkpoint. Only
 * outside a transaction (on the pool), which a failed statement would abort.
 */
export async function readCheckpointOnPool(
  pool: Queryable,
  schema: string,
): Promise<Checkpoint | undefined> {
  try {
    return await checkpointIn(pool, schema);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === "3F000" || code === "42P01") return undefined; // no such schema, no such table
    throw error;
  }
}

async function checkpointIn(db: Queryable, schema: string): Promise<Checkpoint | undefined> {
  const result = await db.query<{ version: number } & LogPositionRow>(
    `SELECT c.version, ${logPositionColumns("c")} FROM ${tableIn(schema)("_checkpoint")} AS c`,
  );
  const row = result.rows[0];
  return row && { version: row.version, ...logPositionOf(row) };
}
