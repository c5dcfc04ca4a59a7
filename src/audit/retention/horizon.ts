import type { Queryable } from "../../db/index.ts";
import { BeforeRetentionError } from "../errors.ts";

/** The newest retention run's horizon: the earliest moment the log answers for; undefined before any run. */
export async function readRetentionHorizon(db: Queryable): Promise<Date | undefined> {
  const result = await db.query<{ horizon: Date }>(
    "SELECT horizon FROM log_retention ORDER BY id DESC LIMIT 1",
  );
  return result.rows[0]?.horizon;
}

/**
 * The latest workflow horizon any run used: an instance that finished before it may be a
 * checkpoint now, its start and calls gone. Undefined when no run folded instances.
 */
export async function readInstancesHorizon(db: Queryable): Promise<Date | undefined> {
  const result = await db.query<{ horizon: Date | null }>(
    "SELECT max(workflow_horizon) AS horizon FROM log_retention",
  );
  return result.rows[0]?.horizon ?? undefined;
}

/**
 * The earliest moment from which the log still holds workflow instances' runs whole, and the
 * directory as they read it: the later of the newest run's horizon (entries') and
 * `readInstancesHorizon`. Undefined before any run. What `annal simulate` replays from.
 */
export async function readWorkflowHorizon(db: Queryable): Promise<Date | undefined> {
  const result = await db.query<{ horizon: Date | null }>(
    `SELECT greatest((SELECT horizon FROM log_retention ORDER BY id DESC LIMIT 1),
                     (SELECT max(workflow_horizon) FROM log_retention)) AS horizon`,
  );
  return result.rows[0]?.horizon ?? undefined;
}

/**
 * Refuses a moment before the retention horizon with 410 `ANNAL_BEFORE_RETENTION`, naming the
 * horizon: what was true then is no longer in the log, and an answer from what is left would
 * be wrong, not merely incomplete. `parameter` names where the moment came from (`at`);
 * `horizonOf` reads the horizon that applies (default the entries', `readRetentionHorizon`).
 */
export async function checkNotBeforeRetention(
  db: Queryable,
  at: Date,
  parameter = "at",
  horizonOf: (db: Queryable) => Promise<Date | undefined> = readRetentionHorizon,
): Promise<void> {
  const horizon = await horizonOf(db);
  if (horizon && at < horizon) throw new BeforeRetentionError(parameter, at, horizon);
}
