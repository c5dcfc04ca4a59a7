import { createHash } from "node:crypto";
import { AnnalError } from "../errors/index.ts";
import type { Pool } from "../db/index.ts";
import { createDatabaseOn, type TestDatabase } from "../testing/index.ts";

/**
 * A scratch database beside the live one (on the same server, migrated like it, dropped after
 * the simulation): the simulated instances' events, timers and jobs go there, never into the
 * live log. Made as the live pool's role, which needs the right to create databases.
 *
 * @throws AnnalError `ANNAL_SIMULATE_SCRATCH_UNAVAILABLE` when it cannot be made.
 */
export async function scratchDatabase(live: Pool): Promise<TestDatabase> {
  const url = live.options.connectionString;
  if (!url) {
    throw new AnnalError(
      "ANNAL_SIMULATE_SCRATCH_UNAVAILABLE",
      "annal's database was not opened from a URL, so no scratch database can be made beside it",
    );
  }
  try {
    return await createDatabaseOn(url, await scratchPrefix(live));
  } catch (error) {
    throw new AnnalError(
      "ANNAL_SIMULATE_SCRATCH_UNAVAILABLE",
      `no scratch database could be made beside annal's: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/**
 * Stops the scratch database's clock (`annal_now()`, which every deadline, timer and retry of
 * the engine reads): from now on it says only what `setScratchClock` sets. A simulation runs
 * much faster than the period it replays, so a clock that ran on would read the past directory
 * ahead of the moment replayed. Only a scratch database's clock is ever stopped.
 */
export async function stopScratchClock(scratch: Pool): Promise<void> {
  await scratch.query(`ALTER TABLE annal_clock ADD COLUMN stopped_at timestamptz`);
  await scratch.query(
    `CREATE OR REPLACE FUNCTION annal_now() RETURNS timestamptz LANGUAGE sql STABLE
       AS $$ SELECT coalesce((SELECT stopped_at FROM annal_clock),
                             clock_timestamp() + (SELECT "offset" FROM annal_clock)) $$`,
  );
}

/** Sets the scratch database's stopped clock to `moment`. */
export async function setScratchClock(scratch: Pool, moment: Date): Promise<void> {
  await scratch.query(`UPDATE annal_clock SET stopped_at = $1`, [moment]);
}

/**
 * `annal_simulation_<live>`: `<live>` a digest of the live database's name, so that the scratch
 * databases of one annal are told from another's on a shared server (the test suite's).
 */
async function scratchPrefix(live: Pool): Promise<string> {
  const { rows } = await live.query<{ name: string }>("SELECT current_database() AS name");
  return `annal_simulation_${createHash("sha256").update(rows[0]!.name).digest("hex").slice(0, 8)}`;
}
