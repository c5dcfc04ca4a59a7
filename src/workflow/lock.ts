import { trySessionLock, type Pool, type SessionLock } from "../db/index.ts";

export type InstanceLock = SessionLock;

/**
 * Takes an instance's lock, or returns undefined when another engine or command holds it: at
 * once, or after waiting up to `waitMs` for it. A session advisory lock, held while the
 * instance is advanced or a command decides, and released by `release`, or by PostgreSQL when
 * the process that held it dies, so a killed worker never leaves an instance locked.
 *
 * It is held on the pool's lock connection (`trySessionLock`), not on a pooled connection of
 * its own: a lock that pinned a pooled connection while the advance under it needed more hung
 * annal for good once `[workflows] concurrency` advances held (nearly) the whole pool. The
 * advance under the lock takes pooled connections one at a time, each for one statement or one
 * transaction, and every such wait is bounded (`[database] connectionTimeout`), so no setting
 * of the pool or the concurrency can deadlock the engine.
 */
export async function lockInstance(
  pool: Pool,
  instanceId: string,
  options: { readonly waitMs?: number } = {},
): Promise<InstanceLock | undefined> {
  return trySessionLock(pool, `annal-workflow:${instanceId}`, options);
}
/** The database's clock (`annal_now()`), which a test may move for its own database. */
export async function databaseClock(pool: Pool): Promise<Date> {
  const result = await pool.query<{ now: Date }>("SELECT annal_now() AS now");
  return result.rows[0]!.now;
}
