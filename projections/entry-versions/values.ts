/**
 * The value rows of the versions in `versions` (a relation with `entry_versions`' columns):
 * one per value of a typed version that is not a deletion, folded with PostgreSQL's `lower()`
 * and cut at `keyLength` characters exactly as `entry_values` holds an entry's values (the
 * filters compiled for both are the same), with the version's validity. JSON nulls and
 * attributes that are no arrays hold no value.
 */
export function versionValueRows(versions: string, keyLength: string): string {
  return `SELECT r.entry_uuid, r.version, r.type, a.name, (v.n - 1)::integer,
                 left(f.folded, ${keyLength}) COLLATE "C",
                 (CASE WHEN length(f.folded) > ${keyLength} THEN f.folded END) COLLATE "C",
                 r.valid_from, r.valid_to
            FROM ${versions} AS r
           CROSS JOIN LATERAL jsonb_each(r.attributes || r.operational) AS a(name, list)
           CROSS JOIN LATERAL jsonb_array_elements_text(
                   CASE WHEN jsonb_typeof(a.list) = 'array' THEN a.list ELSE '[]'::jsonb END)
                 WITH ORDINALITY AS v(value, n)
           CROSS JOIN LATERAL (SELECT lower(v.value) AS folded) AS f
           WHERE r.type IS NOT NULL AND NOT r.deleted AND v.value IS NOT NULL`;
}
