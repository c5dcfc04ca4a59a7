import type { Pool } from "../../src/db/index.ts";
import { logOrder } from "../../src/store/index.ts";

/** The change feed, in order, optionally for one entry (a plain read of the projection). */
export async function feed(pool: Pool, entryUUID?: string) {
  const result = await pool.query(
    `SELECT c.entry_uuid, c.change_type, c.dn, c.old_dn, c.type, c.actor, c.attributes, c.patch,
            c.occurred_at
       FROM projection_changes.changes AS c
      WHERE $1::uuid IS NULL OR c.entry_uuid = $1
      ORDER BY ${logOrder("c")}`,
    [entryUUID ?? null],
  );
  return result.rows;
}

/** The entry's user attributes as they were at `at` (undefined when it did not exist then). */
export async function entryAtTime(pool: Pool, entryUUID: string, at: Date) {
  const result = await pool.query(
    `SELECT attributes, deleted FROM projection_entry_versions.entry_versions
      WHERE entry_uuid = $1 AND valid_from <= $2 ORDER BY valid_from DESC, version DESC LIMIT 1`,
    [entryUUID, at],
  );
  const row = result.rows[0];
  return row && !row.deleted ? (row as { attributes: Record<string, string[]> }) : undefined;
}
