import pg from "pg";

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that can run a query: the pool, or a client inside a transaction. */
export type Queryable = pg.Pool | pg.PoolClient | pg.Client;

// int8 (bigint) columns hold positions and versions: they stay far below 2^53, so numbers
// are safe and much easier to use than strings. xid8 stays a string (compared in SQL only).
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

export function createPool(url: string, size = 10): Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: size,
    application_name: "annal",
    // No parallel plans: annal's queries are short pages and lookups, many at once, and a
    // parallel plan's workers cost more to start than the page takes (a REST page sorted by an
    // attribute: 165 ms of worker start-up for a 50-row walk of one index, bench/RESULTS.md).
    options: "-c max_parallel_workers_per_gather=0",
  });
  // An idle client losing its connection (server restart) must not crash the process; the
  // pool discards it and the next query opens a new one.
  pool.on("error", () => {});
  // Nor a client that is checked out when its connection ends (57P01 when the server stops
  // or the database is dropped, a LISTEN client held for good): an EventEmitter's `error`
  // with no listener would end the process. Its query in flight rejects all the same, so
  // the caller still learns of it; the pool drops the client when it is released.
  pool.on("connect", (client) => client.on("error", () => {}));
  return pool;
}

/**
 * Runs `work` inside one transaction on a client of its own, committing when it resolves and
 * rolling back when it throws.
 */
export async function withTransaction<T>(
  pool: Pool,
  work: (tx: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
