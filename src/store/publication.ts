import { withTransaction, type Pool } from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";

/** What `ensurePublication` did. */
export type PublicationOutcome = "created" | "updated" | "unchanged";

/**
 * Makes `name` a PostgreSQL publication of the event table, for logical-replication clients
 * (Debezium, `pg_recvlogical`, a subscription of another PostgreSQL): created when missing, the
 * event table added to it when it lacks it, and `publish_via_partition_root` turned on, so that
 * a client sees the rows of every partition, present and future, as rows of `events` (and
 * needs no change when a new partition is made). What it publishes is PostgreSQL's default
 * (inserts, and the updates and deletes that only erasure or retention make); an operator's
 * own `publish` setting on an existing publication is kept.
 *
 * Idempotent, and safe when several annal processes start at once: the work is done under a
 * transaction-scoped advisory lock. The name comes from the configuration, checked there to
 * be a plain identifier; it is still quoted here.
 *
 * @example
 * await ensurePublication(pool, "annal_events"); // "created", then "unchanged"
 */
export async function ensurePublication(pool: Pool, name: string): Promise<PublicationOutcome> {
  try {
    return await withTransaction(pool, async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtext('annal.publication'))");
      const quoted = quoteName(name);
      const found = await tx.query<{ via_root: boolean; covers: boolean }>(
        `SELECT p.pubviaroot AS via_root,
                EXISTS (SELECT 1 FROM pg_publication_rel AS r
                         WHERE r.prpubid = p.oid AND r.prrelid = 'events'::regclass) AS covers
           FROM pg_publication AS p WHERE p.pubname = $1`,
        [name],
      );
      const publication = found.rows[0];
      if (!publication) {
        await tx.query(
          `CREATE PUBLICATION ${quoted} FOR TABLE events
             WITH (publish_via_partition_root = true)`,
        );
        return "created";
      }
      if (publication.covers && publication.via_root) {
        return "unchanged";
      }
      if (!publication.covers) await tx.query(`ALTER PUBLICATION ${quoted} ADD TABLE events`);
      if (!publication.via_root) {
        await tx.query(`ALTER PUBLICATION ${quoted} SET (publish_via_partition_root = true)`);
      }
      return "updated";
    });
  } catch (cause) {
    const code = (cause as { code?: string }).code;
    if (code === "42501") {
      throw new AnnalError(
        "ANNAL_PUBLICATION_FAILED",
        `cannot create the publication ${name} of the event log: annal's database user may not`,
        {
          hint: `let a superuser run: CREATE PUBLICATION ${name} FOR TABLE events WITH (publish_via_partition_root = true); or grant annal's user CREATE on the database and ownership of events`,
          cause,
        },
      );
    }
    throw cause;
  }
}

function quoteName(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
