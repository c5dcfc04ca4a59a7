import type { Pool, Queryable } from "./pool.ts";

/** A transaction opened by `withTransaction` (or its pipelined kind), and what waits for its commit. */
interface OpenTransaction {
  readonly pool: Pool;
  readonly callbacks: ((pool: Pool) => void)[];
}

const open = new WeakMap<object, OpenTransaction>();

/**
 * Runs `callback` (with the transaction's pool) once `tx` has committed, when `tx` is a
 * client inside a transaction that `withTransaction` or `withPipelinedTransaction` opened;
 * a rollback drops it. Returns false, registering nothing, for any other `tx` (a client in a
 * transaction it began itself, the pool, a client outside a transaction): the caller, who
 * cannot learn when that one commits, must do its work another way.
 *
 * @example
 * if (!afterCommit(tx, (pool) => notifier(pool).poke())) await tx.query("SELECT pg_notify(...)");
 */
export function afterCommit(tx: Queryable, callback: (pool: Pool) => void): boolean {
  const transaction = open.get(tx);
  if (!transaction) return false;
  transaction.callbacks.push(callback);
  return true;
}

/** Marks `client` as inside a transaction of `pool` that its opener will commit or roll back. */
export function transactionOpened(client: object, pool: Pool): void {
  open.set(client, { pool, callbacks: [] });
}

/** Ends `client`'s transaction: on a commit its `afterCommit` callbacks run, in order. */
export function transactionClosed(client: object, committed: boolean): void {
  const transaction = open.get(client);
  open.delete(client);
  if (!committed || !transaction) return;
  for (const callback of transaction.callbacks) callback(transaction.pool);
}
