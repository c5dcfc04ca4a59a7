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
 * Refuses a moment before the retention horizon with 410 `ANNAL_BEFORE_RETENTION`, naming the
 * horizon: what was true then is no longer in the log, and an answer from what is left would
 * be wrong, not merely incomplete. `parameter` names where the moment came from (`at`).
 */
export async function checkNotBeforeRetention(
  db: Queryable,
  at: Date,
  parameter = "at",
): Promise<void> {
  const horizon = await readRetentionHorizon(db);
  if (horizon && at < horizon) throw new BeforeRetentionError(parameter, at, horizon);
}
