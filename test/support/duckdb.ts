import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import type { Json } from "@duckdb/node-api";

/**
 * DuckDB in memory, the independent reader of the Parquet annal writes: `rows(sql)` answers
 * the rows as JSON values (timestamps as text, lists as arrays, BIGINT as text).
 */
export interface DuckDB {
  rows(sql: string): Promise<Record<string, Json>[]>;
}

export async function duckdb(t: { teardown(fn: () => unknown): void }): Promise<DuckDB> {
  const instance = await DuckDBInstance.create(":memory:");
  const connection: DuckDBConnection = await instance.connect();
  t.teardown(() => {
    connection.closeSync();
    instance.closeSync();
  });
  return {
    rows: async (sql) => (await connection.runAndReadAll(sql)).getRowObjectsJson(),
  };
}

/** A path quoted as a DuckDB string literal. */
export const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
