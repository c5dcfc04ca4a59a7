import { normalizeDN } from "../../src/directory/index.ts";
import type { FirstSnapshots, ProjectionContext } from "../../src/projector/index.ts";
import { generalizedTime } from "../entry-events.ts";
import { insertEntryValues } from "./values.ts";

/**
 * `entries` for a run of first snapshots (`Projection.applyFirstSnapshots`): what `apply`
 * writes for an entry whose first event is a snapshot, set-wise. The row's state is copied
 * from the event inside PostgreSQL; only what needs our code (the normalised DN, the times
 * read from the operational attributes) is worked out here, from a few fields of each event
 * rather than the whole snapshot. Then the value index for these entries, which have no rows there yet (`insertEntryValues`).
 */
export async function insertFirstSnapshots(
  run: FirstSnapshots,
  { tx, table }: ProjectionContext,
): Promise<void> {
  const params: unknown[] = [];
  const { rows } = await tx.query<{
    position: string;
    entry_uuid: string;
    dn: string;
    created: string | null;
    modified: string | null;
    occurred_at: Date;
  }>(
    `SELECT e.position, e.data->>'entryUUID' AS entry_uuid, e.data->'state'->>'dn' AS dn,
            e.data->'state'->'operational'->'createTimestamp'->>0 AS created,
            e.data->'state'->'operational'->'modifyTimestamp'->>0 AS modified, e.occurred_at
       FROM ${run.from(params)}`,
    params,
  );
  if (rows.length === 0) return;
  // As `apply`: created at the entry's createTimestamp, modified at its modifyTimestamp (the
  // last event is a snapshot), each the event's occurred_at when the entry has none.
  await tx.query(
    `INSERT INTO ${table("entries")}
       (entry_uuid, type, dn, dn_norm, attributes, operational, created_at, modified_at, version,
        created_position, position, transaction_id)
     SELECT (e.data->>'entryUUID')::uuid, e.data->'state'->>'type', e.data->'state'->>'dn',
            r.dn_norm, e.data->'state'->'attributes', e.data->'state'->'operational',
            r.created_at, r.modified_at, e.stream_version, e.position, e.position,
            e.transaction_id
       FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::timestamptz[])
            AS r(position, dn_norm, created_at, modified_at)
       JOIN events AS e ON e.position = r.position`,
    [
      rows.map((row) => row.position),
      rows.map((row) => normalizeDN(row.dn)),
      rows.map((row) => generalizedTime(row.created) ?? row.occurred_at),
      rows.map((row) => generalizedTime(row.modified) ?? row.occurred_at),
    ],
  );
  const values = table("entry_values");
  // An empty value index loaded with many entries' values is keyed after the load, in one
  // sorted build, rather than row by row: its key took 40% of the values' statement at 10,000
  // entries (bench/RESULTS.md, first start). Put back in the run's last chunk, in this
  // transaction: `apply` upserts by it.
  if (run.first && (await isEmpty(tx, values))) {
    await tx.query(`ALTER TABLE ${values} DROP CONSTRAINT entry_values_pkey`);
  }
  await insertEntryValues(
    tx,
    table,
    rows.map((row) => row.entry_uuid),
  );
  if (run.last && !(await hasPrimaryKey(tx, values))) {
    await tx.query("SET LOCAL maintenance_work_mem = '256MB'");
    await tx.query(
      `ALTER TABLE ${values} ADD CONSTRAINT entry_values_pkey
         PRIMARY KEY (entry_uuid, attribute, ordinal)`,
    );
  }
}

async function isEmpty(tx: ProjectionContext["tx"], table: string): Promise<boolean> {
  return (await tx.query(`SELECT 1 FROM ${table} LIMIT 1`)).rowCount === 0;
}

async function hasPrimaryKey(tx: ProjectionContext["tx"], table: string): Promise<boolean> {
  const result = await tx.query(
    "SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass($1) AND contype = 'p'",
    [table],
  );
  return (result.rowCount ?? 0) > 0;
}
