/** The columns of `entry_version_values` that `valueSpanRows` selects, in its order. */
export const VALUE_SPAN_COLUMNS =
  "entry_uuid, type, attribute, value_key, value_folded, valid_from, valid_to";

/**
 * The spans of the values of the versions in `versions` (a relation with `entry_versions`'
 * columns; an entry's versions in it consecutive, its last one's `valid_to` null when it is
 * still valid): one row per stretch of consecutive versions of an entry that hold a value,
 * from the first one's start to the last one's end. A value is as `entry_values` holds it:
 * folded by PostgreSQL's `lower()` and cut at `keyLength` characters (the filters compiled
 * for both are the same), of a typed version that is not a deletion; JSON nulls and
 * attributes that are no arrays hold none. Two values of one attribute that fold alike are
 * one value: a filter cannot tell them apart.
 *
 * Also `first`: whether the span starts with the entry's first version in `versions`, where
 * the projection joins it to the span the entry's previous version left open.
 *
 * Islands: a value's versions are numbered in the entry's order (`idx`) and among the value's
 * own (`row_number`); the difference is the same along a stretch and grows across a gap.
 */
export function valueSpanRows(versions: string, keyLength: string): string {
  return `SELECT s.entry_uuid, s.type, s.attribute, s.value_key, s.value_folded,
                 min(s.valid_from) AS valid_from,
                 (array_agg(s.valid_to ORDER BY s.idx DESC))[1] AS valid_to,
                 min(s.idx) = 1 AS first
            FROM (SELECT d.*, d.idx - row_number() OVER (
                           PARTITION BY d.entry_uuid, d.type, d.attribute, d.value_key, d.value_folded
                           ORDER BY d.idx) AS island
                    FROM (SELECT DISTINCT q.entry_uuid, q.idx, q.valid_from, q.valid_to, q.type,
                                 a.name AS attribute,
                                 left(f.folded, ${keyLength}) COLLATE "C" AS value_key,
                                 (CASE WHEN length(f.folded) > ${keyLength} THEN f.folded END) COLLATE "C"
                                   AS value_folded
                            FROM (SELECT r.*, row_number() OVER (
                                           PARTITION BY r.entry_uuid ORDER BY r.version) AS idx
                                    FROM ${versions} AS r) AS q
                           CROSS JOIN LATERAL jsonb_each(q.attributes || q.operational) AS a(name, list)
                           CROSS JOIN LATERAL jsonb_array_elements_text(
                                   CASE WHEN jsonb_typeof(a.list) = 'array' THEN a.list ELSE '[]'::jsonb END)
                                 AS v(value)
                           CROSS JOIN LATERAL (SELECT lower(v.value) AS folded) AS f
                           WHERE q.type IS NOT NULL AND NOT q.deleted AND v.value IS NOT NULL) AS d
                 ) AS s
           GROUP BY s.entry_uuid, s.type, s.attribute, s.value_key, s.value_folded, s.island`;
}

/**
 * `valueSpanRows` for versions that are each their entry's only one (a run of first
 * snapshots): every value of a version spans from its start to its end, so the islands, the
 * window and the grouping that join an entry's versions have nothing to do. Two values of one
 * attribute that fold alike are one value, as there. The columns are `VALUE_SPAN_COLUMNS`.
 */
export function onlyVersionValueSpanRows(versions: string, keyLength: string): string {
  return `SELECT DISTINCT q.entry_uuid, q.type, a.name AS attribute,
                 left(f.folded, ${keyLength}) COLLATE "C" AS value_key,
                 (CASE WHEN length(f.folded) > ${keyLength} THEN f.folded END) COLLATE "C"
                   AS value_folded,
                 q.valid_from, q.valid_to
            FROM ${versions} AS q
           CROSS JOIN LATERAL jsonb_each(q.attributes || q.operational) AS a(name, list)
           CROSS JOIN LATERAL jsonb_array_elements_text(
                   CASE WHEN jsonb_typeof(a.list) = 'array' THEN a.list ELSE '[]'::jsonb END)
                 AS v(value)
           CROSS JOIN LATERAL (SELECT lower(v.value) AS folded) AS f
           WHERE q.type IS NOT NULL AND NOT q.deleted AND v.value IS NOT NULL`;
}
