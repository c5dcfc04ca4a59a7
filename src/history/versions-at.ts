import { ENTRY_VERSIONS } from "../../projections/entry-versions/index.ts";

/**
 * Every entry as it was at a moment, as a relation with the columns of `entries` that a
 * search reads: `entry_uuid`, `type`, `dn`, `dn_norm`, `attributes`, `operational`,
 * `modified_at` (the version's start), `version`, `created_position`, and `a` (user and
 * operational attributes, what a filter tests). Each entry appears with its version valid
 * then, `valid_from <= at < valid_to`, unless that version is its deletion; versions of one
 * entry never overlap, so an entry appears at most once.
 *
 * `created_position` is the position of the entry's first version (its add, or its first
 * snapshot), as `entries` keeps it: the order the directory returns entries in. `dn_norm` is
 * the DN in lower case (the versions keep the DN as the directory spelled it).
 *
 * The REST channel's typed search at a moment (`versionsAtSource`) reads the same versions for
 * one type; this one is for reads that name a subtree instead (the GraphQL gateway's `@at`).
 *
 * @example
 * const sql = `SELECT e.dn FROM ${entriesAtSource("$1", "e")} WHERE e.dn_norm = $2`;
 * await pool.query(sql, [at, "uid=alice,ou=people,dc=example,dc=org"]);
 */
export function entriesAtSource(atParam: string, alias: string): string {
  return `(SELECT v.entry_uuid, v.type, v.dn, lower(v.dn) AS dn_norm, v.attributes,
            v.operational, v.attributes || v.operational AS a, v.valid_from AS modified_at,
            v.version,
            (SELECT min(f.position) FROM ${ENTRY_VERSIONS} AS f
              WHERE f.entry_uuid = v.entry_uuid) AS created_position
       FROM ${ENTRY_VERSIONS} AS v
      WHERE NOT v.deleted AND v.valid_from <= ${atParam}::timestamptz
        AND coalesce(v.valid_to, 'infinity') > ${atParam}::timestamptz) AS ${alias}`;
}
