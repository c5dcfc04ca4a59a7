import pg from "pg";
import { DatabaseBusyError, isDatabaseUnreachable } from "./errors.ts";
import { transactionClosed, transactionOpened } from "./after-commit.ts";
import { closeSessionLocks } from "./session-locks.ts";
import { parseTimestamptz } from "./timestamps.ts";

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that can run a query: the pool, or a client inside a transaction. */
export type Queryable = pg.Pool | pg.PoolClient | pg.Client;

// int8 (bigint) columns hold positions and versions: they stay far below 2^53, so numbers
// are safe and much easier to use than strings. xid8 stays a string (compared in SQL only).
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));
// Every event carries two timestamps: read without pg's regular expressions (timestamps.ts).
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, parseTimestamptz);

/** How long a caller waits for a pooled connection by default (`[database] connectionTimeout`). */
export const DEFAULT_CONNECTION_TIMEOUT_MS = 10_000;

/**
 * annal's pool of `size` connections to `url`. Every wait for a connection is bounded: a
 * caller that gets none within `connectionTimeoutMs` (all are in use; or a new one does not
 * open) fails with `DatabaseBusyError` (`ANNAL_DATABASE_BUSY`, a 503 with `Retry-After`)
 * instead of waiting for good. `end()` also closes the pool's lock connection
 * (`trySessionLock`).
 */
export function createPool(
  url: string,
  size = 10,
  options: { readonly connectionTimeoutMs?: number } = {},
): Pool {
  return guarded(
    new BoundedPool({
      connectionString: url,
      max: size,
      application_name: "annal",
      connectionTimeoutMillis: options.connectionTimeoutMs ?? DEFAULT_CONNECTION_TIMEOUT_MS,
      // No parallel plans: annal's queries are short pages and lookups, many at once, and a
      // parallel plan's workers cost more to start than the page takes (a REST page sorted by an
      // attribute: 165 ms of worker start-up for a 50-row walk of one index, bench/RESULTS.md).
      options: "-c max_parallel_workers_per_gather=0",
    }),
  );
}

type ConnectCallback = (
  error: Error | undefined,
  client: PoolClient | undefined,
  done: (release?: unknown) => void,
) => void;

/**
 * pg's pool, whose waits for a connection end in `DatabaseBusyError` (pg-pool's own `query`
 * goes through `connect` too), and whose `end` closes its lock connection.
 */
class BoundedPool extends pg.Pool {
  /** Whether a connection was ever made: a server never reached is a start-up failure, not an outage. */
  reachedOnce = false;
  /** Whether the last attempt to connect found the server unreachable (see `onAvailability`). */
  unreachable = false;

  override connect(): Promise<PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<PoolClient> | void {
    if (callback) {
      super.connect((error, client, done) => {
        this.noteAvailability(error);
        callback(error && busyOrSame(error, this), client, done);
      });
      return;
    }
    return super.connect().then(
      (client) => {
        this.noteAvailability(undefined);
        return client;
      },
      (error: unknown) => {
        this.noteAvailability(error);
        throw busyOrSame(error, this);
      },
    );
  }

  /** Tells the `onAvailability` listeners when the server goes away and when it is back. */
  noteAvailability(error: unknown): void {
    const unreachable = error !== undefined && isDatabaseUnreachable(error);
    if (error !== undefined && !unreachable) return; // a timeout or a refusal says neither
    if (!unreachable) this.reachedOnce = true;
    if (unreachable === this.unreachable) return;
    this.unreachable = unreachable;
    for (const listener of availabilityListeners.get(this) ?? [])
      listener(unreachable, error, this.reachedOnce);
  }

  override end(): Promise<void>;
  override end(callback: () => void): void;
  override end(callback?: () => void): Promise<void> | void {
    const closed = closeSessionLocks(this);
    if (callback) {
      void closed.finally(() => super.end(callback));
      return;
    }
    return closed.then(() => super.end());
  }
}

/** `reachedBefore`: whether a connection was ever made (never: a start-up failure, no outage). */
type AvailabilityListener = (unreachable: boolean, error: unknown, reachedBefore: boolean) => void;
const availabilityListeners = new WeakMap<pg.Pool, AvailabilityListener[]>();

/**
 * Calls `listener(true, error)` once when `pool` first fails to connect because the server is
 * unreachable (stopped, restarting, refusing), and `listener(false)` once when it connects
 * again: so that an outage is logged once, not once a request. Only pools of `createPool`.
 */
export function onAvailability(pool: Pool, listener: AvailabilityListener): void {
  availabilityListeners.set(pool, [...(availabilityListeners.get(pool) ?? []), listener]);
}

/** pg-pool's message when no connection came in `connectionTimeoutMillis`. */
const POOL_WAIT_TIMED_OUT = "timeout exceeded when trying to connect";

function busyOrSame<E>(error: E, pool: pg.Pool): E | DatabaseBusyError {
  return error instanceof Error && error.message === POOL_WAIT_TIMED_OUT
    ? new DatabaseBusyError(pool.options.connectionTimeoutMillis ?? 0, pool.options.max ?? 0, error)
    : error;
}

/**
 * A pool of at most `size` connections like `pool`'s (same server, user and settings) whose
 * clients pipeline (pg's `pipeline` option): a query is sent at once, without waiting for the
 * answers to those sent before it, and the server runs them in order. For
 * `withPipelinedTransaction`. Cursors cannot run on such a client, which is why it is a pool
 * of its own.
 */
export function pipelinedPool(pool: Pool, size: number): Pool {
  return guarded(new BoundedPool({ ...pool.options, max: size, pipeline: true }));
}

function guarded(pool: Pool): Pool {
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
 * rolling back when it throws. What `work` registered with `afterCommit` runs once it commits.
 */
export async function withTransaction<T>(
  pool: Pool,
  work: (tx: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let committed = false;
  try {
    await client.query("BEGIN");
    transactionOpened(client, pool);
    const result = await work(client);
    // A transaction a failed statement aborted answers COMMIT with ROLLBACK.
    committed = (await client.query("COMMIT")).command === "COMMIT";
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    transactionClosed(client, committed);
    client.release();
  }
}

/**
 * Runs `work` holding the session advisory lock `name` (`pg_advisory_lock(hashtext(name))`),
 * waiting for it first, on a connection of its own that `work` is given. A session lock takes
 * no transaction id, so it holds back no reader of the log; PostgreSQL lets it go with the
 * session if the process dies, and a connection that breaks is dropped, not pooled.
 */
export async function withSessionLock<T>(
  pool: Pool,
  name: string,
  work: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("SELECT pg_advisory_lock(hashtext($1))", [name]);
  } catch (error) {
    client.release(true);
    throw error;
  }
  try {
    return await work(client);
  } finally {
    try {
      await client.query("SELECT pg_advisory_unlock(hashtext($1))", [name]);
      client.release();
    } catch {
      // The connection is broken: dropping it ends the session and its lock with it.
      client.release(true);
    }
  }
}

/**
 * Runs `work` in one transaction on a client of a pipelined pool (`pipelinedPool`), in as few
 * round trips as `work` allows: BEGIN goes out with the work's first statements, and `work`
 * may send several statements before awaiting them (they run in the order sent). COMMIT is
 * sent only once `work` resolves, and `work` must have awaited every statement it sent, also
 * when one fails (`settleAll`): a statement still unsent when ROLLBACK goes out would run
 * outside the transaction.
 *
 * @example
 * await withPipelinedTransaction(pool, async (tx) => {
 *   const [locked, found] = await settleAll([tx.query("SELECT pg_advisory_xact_lock(1)"), tx.query(lookup)]);
 *   ...
 * });
 */
export async function withPipelinedTransaction<T>(
  pool: Pool,
  work: (tx: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  const begun = client.query("BEGIN");
  // Awaited below; its failure also fails every statement after it.
  begun.catch(() => {});
  transactionOpened(client, pool);
  let committed = false;
  try {
    const result = await work(client);
    await begun;
    const ended = await client.query("COMMIT");
    // PostgreSQL answers COMMIT in a failed transaction with ROLLBACK, not an error: a
    // statement of `work` that failed unobserved must not pass for committed.
    if (ended.command !== "COMMIT") {
      throw new Error(`the transaction was rolled back (${ended.command}), not committed`);
    }
    committed = true;
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    transactionClosed(client, committed);
    client.release();
  }
}

/**
 * Like `Promise.all`, but settles every promise before it rejects (with the first failure), so
 * that nothing of a pipelined transaction is still to be sent when it is rolled back.
 */
export async function settleAll<T extends readonly unknown[]>(
  promises: readonly [...{ [K in keyof T]: Promise<T[K]> }],
): Promise<T> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}
