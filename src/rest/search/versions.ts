import { ENTRY_VERSIONS } from "../../../projections/entry-versions/index.ts";

/**
 * The entries of a type as they were at a moment, as `e` with the columns a search reads from
 * `entries` (`entry_uuid`, `type`, `dn`, `dn_norm`, `attributes`, `operational`,
 * `modified_at`), `version` (what a filter over the versions' value index matches with the
 * entry): each
 * entry's version valid then, `valid_from <= at < valid_to`, unless that version is its
 * deletion. Versions of one entry never overlap, so an entry appears at most once; a version
 * that ended the moment it began (two changes at one instant) is valid at no moment.
 *
 * `dn_norm` is the DN in lower case: the versions keep the DN as the directory spelled it, so
 * a sort by DN at a moment orders DNs spelled alike as now, and may differ from now's order
 * for DNs spelled with blanks or upper-case attribute types.
 *
 * The index on (type, coalesce(valid_to, 'infinity'), valid_from) WHERE NOT deleted
 * (`entryVersionsIndexes`) serves the condition: its range starts at the moment, so a recent
 * moment reads about the entries alive then and the versions ended since.
 */
export function versionsAtSource(typeParam: string, atParam: string): string {
  return `(SELECT v.entry_uuid, v.version, v.type, v.dn, lower(v.dn) AS dn_norm, v.attributes,
            v.operational,
            v.valid_from AS modified_at
       FROM ${ENTRY_VERSIONS} AS v
      WHERE v.type = ${typeParam} AND NOT v.deleted AND v.valid_from <= ${atParam}::timestamptz
        AND coalesce(v.valid_to, 'infinity') > ${atParam}::timestamptz) AS e`;
}
