import type { Queryable } from "../db/index.ts";
import type { AttributeMap } from "../events/index.ts";
import { ENTRY_VERSIONS } from "../../projections/entry-versions/index.ts";

/** The whole directory as it was at a moment, and how long it stayed so. */
export interface DirectoryAt {
  readonly at: Date;
  readonly entries: readonly { readonly dn: string; readonly attributes: AttributeMap }[];
  /** The next change after `at` (the state holds until then); null when none came since. */
  readonly until: Date | null;
}

/**
 * Every entry as it was at `at` (the clock of `occurred_at`), from `entry_versions`: each
 * entry's version with the latest start not after `at`, deletions left out. For the
 * simulator, which reads the past directory the way a workflow's steps read the live one.
 */
export async function directoryAt(db: Queryable, at: Date): Promise<DirectoryAt> {
  const result = await db.query<{ dn: string; attributes: AttributeMap; deleted: boolean }>(
    `SELECT DISTINCT ON (v.entry_uuid) v.dn, v.attributes, v.deleted
       FROM ${ENTRY_VERSIONS} AS v
      WHERE v.valid_from <= $1
      ORDER BY v.entry_uuid, v.valid_from DESC, v.version DESC`,
    [at],
  );
  const next = await db.query<{ until: Date | null }>(
    `SELECT min(v.valid_from) AS until FROM ${ENTRY_VERSIONS} AS v WHERE v.valid_from > $1`,
    [at],
  );
  return {
    at,
    entries: result.rows
      .filter((row) => !row.deleted)
      .map((row) => ({ dn: row.dn, attributes: row.attributes })),
    until: next.rows[0]?.until ?? null,
  };
}
