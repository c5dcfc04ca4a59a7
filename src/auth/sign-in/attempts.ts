import type { Pool } from "../../db/index.ts";
import { AnnalError } from "../../errors/index.ts";

/** `[auth.rateLimit]`: attempts per window, per account and per address. */
export interface AttemptLimits {
  readonly perAccount: number;
  readonly perAddress: number;
  /** Milliseconds. */
  readonly window: number;
}

/**
 * Counts one attempt against `key` in its current fixed window (in the database, so every
 * annal process shares the count) and refuses with `ANNAL_SIGN_IN_RATE_LIMITED` (429, with
 * `Retry-After`) past `limit`.
 */
export async function countAttempt(
  pool: Pool,
  key: string,
  limit: number,
  windowMs: number,
): Promise<void> {
  const row = (
    await pool.query<{ attempts: number; retry_after: number }>(
      `INSERT INTO sign_in_attempts AS a (key, window_start, attempts) VALUES ($1, now(), 1)
       ON CONFLICT (key) DO UPDATE SET
         attempts = CASE WHEN a.window_start <= now() - make_interval(secs => $2::double precision / 1000)
                         THEN 1 ELSE a.attempts + 1 END,
         window_start = CASE WHEN a.window_start <= now() - make_interval(secs => $2::double precision / 1000)
                             THEN now() ELSE a.window_start END
       RETURNING attempts,
         ceil(extract(epoch FROM a.window_start + make_interval(secs => $2::double precision / 1000) - now()))::int AS retry_after`,
      [key, windowMs],
    )
  ).rows[0]!;
  if (row.attempts > limit) {
    throw new AnnalError(
      "ANNAL_SIGN_IN_RATE_LIMITED",
      "too many sign-in attempts; wait, then try again",
      {
        headers: { "retry-after": String(Math.max(1, row.retry_after)) },
      },
    );
  }
}

/** Whether `key` is already past `limit` in its window, without counting an attempt. */
export async function assertUnderLimit(
  pool: Pool,
  key: string,
  limit: number,
  windowMs: number,
): Promise<void> {
  const row = (
    await pool.query<{ attempts: number; retry_after: number }>(
      `SELECT attempts,
              ceil(extract(epoch FROM window_start + make_interval(secs => $2::double precision / 1000) - now()))::int AS retry_after
         FROM sign_in_attempts
        WHERE key = $1 AND window_start > now() - make_interval(secs => $2::double precision / 1000)`,
      [key, windowMs],
    )
  ).rows[0];
  if (row !== undefined && row.attempts >= limit) {
    throw new AnnalError(
      "ANNAL_SIGN_IN_RATE_LIMITED",
      "too many sign-in attempts; wait, then try again",
      {
        headers: { "retry-after": String(Math.max(1, row.retry_after)) },
      },
    );
  }
}
