import { withTransaction, type Pool } from "../db/index.ts";
import type { Jobs } from "../jobs/index.ts";
import { wake } from "./commit.ts";

/**
 * Turns the timers that are due by the database's clock (`annal_now()`) into wake-up jobs, up
 * to `limit` at a time, deleting them in the same transaction. Any number of processes may do
 * this at once: each takes the rows the others have not locked. Returns how many fired.
 */
export async function fireDueTimers(pool: Pool, jobs: Jobs, limit = 500): Promise<number> {
  return withTransaction(pool, async (tx) => {
    const due = await tx.query<{ instance_id: string }>(
      `DELETE FROM workflow_timers WHERE id IN (
         SELECT id FROM workflow_timers WHERE due_at <= annal_now()
          ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING instance_id`,
      [limit],
    );
    await wake(
      jobs,
      tx,
      due.rows.map((row) => row.instance_id),
    );
    return due.rowCount ?? 0;
  });
}

/**
 * Moves this database's clock (the one `annal_now()` reads) by `ms`: the workflow test driver
 * passes a 30-day deadline in well under a second this way. Never used by annal itself.
 */
export async function advanceDatabaseClock(pool: Pool, ms: number): Promise<void> {
  await pool.query(`UPDATE annal_clock SET "offset" = "offset" + make_interval(secs => $1)`, [
    ms / 1000,
  ]);
}
