import { createHash } from "node:crypto";
import type { Queryable } from "../db/index.ts";

/**
 * This database's identity for cursors: a digest of the epoch uuid written by the first
 * migration, the database oid and the cluster's system identifier. A dump restored into
 * another cluster keeps the uuid but not the system identifier; another database has its
 * own uuid. Reading `pg_control_system()` may be refused to unprivileged roles; the uuid and
 * oid still tell databases apart then.
 */
export async function loadEpoch(db: Queryable): Promise<string> {
  return createHash("sha256")
    .update(await databaseIdentity(db))
    .digest("hex")
    .slice(0, 16);
}

/**
 * The secret material the epoch is a digest of: `<epoch uuid>/<database oid>/<system id>`.
 * Never shown; other keys tied to this database (the REST channel's cursor MAC) derive from it.
 */
export async function databaseIdentity(db: Queryable): Promise<string> {
  const base = await db.query<{ epoch: string; oid: number }>(
    `SELECT epoch::text AS epoch, (SELECT oid FROM pg_database WHERE datname = current_database())::int AS oid
       FROM annal_database`,
  );
  const row = base.rows[0];
  if (!row) throw new Error("annal_database has no row: the event store migration did not run");
  let system = "";
  try {
    const control = await db.query<{ id: string }>(
      "SELECT system_identifier::text AS id FROM pg_control_system()",
    );
    system = control.rows[0]?.id ?? "";
  } catch {
    // not permitted: fall back to the uuid and oid alone
  }
  return `${row.epoch}/${row.oid}/${system}`;
}
