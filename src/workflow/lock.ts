import type { Pool } from "../db/index.ts";

export interface InstanceLock {
  release(): Promise<void>;
}

/**
 * Takes an instance's lock, or returns undefined when another engine or command holds it: at
 * once, or after waiting up to `waitMs` for it. A session-level advisory lock on a connection of its own, held while the instance is
 * advanced or a command decides: it is released by `release`, or by PostgreSQL when the
 * process that held it dies, so a killed worker never leaves an instance locked.
 */
export async function lockInstance(
  pool: Pool,
  instanceId: string,
  options: { readonly waitMs?: number } = {},
): Promise<InstanceLock | undefined> {
  const client = await pool.connect();
  const key = `annal-workflow:${instanceId}`;
  try {
    if (options.waitMs) {
      // Wait a moment for the holder (an engine finishing its advance) rather than refuse.
      await client.query(`SET lock_timeout = ${Math.ceil(options.waitMs)}`);
      try {
        await client.query("SELECT pg_advisory_lock(hashtextextended($1, 0))", [key]);
      } catch (error) {
        await client.query("RESET lock_timeout");
        if ((error as { code?: string }).code !== "55P03") throw error;
        client.release();
        return undefined;
      }
      await client.query("RESET lock_timeout");
    } else {
      const taken = await client.query<{ locked: boolean }>(
        "SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked",
        [key],
      );
      if (!taken.rows[0]?.locked) {
        client.release();
        return undefined;
      }
    }
  } catch (error) {
    client.release(true);
    throw error;
  }
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      try {
        await client.query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [key]);
        client.release();
      } catch {
        // The connection is broken: dropping it ends the session and its lock with it.
        client.release(true);
      }
    },
  };
}

/** The database's clock (`annal_now()`), which a test may move for its own database. */
export async function databaseClock(pool: Pool): Promise<Date> {
  const result = await pool.query<{ now: Date }>("SELECT annal_now() AS now");
  return result.rows[0]!.now;
}
