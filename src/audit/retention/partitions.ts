import type { Pool } from "../../db/index.ts";

/**
 * Drops the event table's partitions that lie wholly before `position` and hold no event any
 * more (retention removed them all), each in a transaction of its own: detached, dropped and
 * struck from `event_partitions`, under the lock that `annal_event_partitions_ensure` takes,
 * so partitions are never made and dropped at once. Returns the names dropped.
 */
export async function dropEmptyPartitionsBefore(pool: Pool, position: number): Promise<string[]> {
  const candidates = await pool.query<{ name: string }>(
    `SELECT p.name FROM event_partitions AS p WHERE p.upper_position <= $1
      ORDER BY p.lower_position`,
    [position],
  );
  const dropped: string[] = [];
  for (const { name } of candidates.rows) {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("SELECT pg_advisory_xact_lock(hashtext('annal.event_partitions'))");
      const table = client.escapeIdentifier(name);
      const any = await client.query(`SELECT 1 FROM ${table} LIMIT 1`);
      if (any.rows.length > 0) {
        await client.query("ROLLBACK");
        continue;
      }
      await client.query(`ALTER TABLE events DETACH PARTITION ${table}`);
      await client.query(`DROP TABLE ${table}`);
      await client.query("DELETE FROM event_partitions WHERE name = $1", [name]);
      await client.query("COMMIT");
      dropped.push(name);
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }
  return dropped;
}
