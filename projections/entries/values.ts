import type { Queryable } from "../../src/db/index.ts";
import { ENTRY_ROW_ATTRIBUTE, VALUE_KEY_LENGTH } from "./tables.ts";

/**
 * Brings `entry_values` and `entry_value_counts` in line with `entries` for the given entries
 * (an entry deleted from `entries` loses its rows), in three set-based statements whatever the
 * number of entries and values: called once per batch, after the batch's rows are written.
 *
 * Only what changed is written: the rows an entry should have (`wantedRows`) are compared with
 * those it has, a row that differs in anything goes, and a wanted row it lacks comes. An entry
 * snapshotted again unchanged (periodic snapshots, a second import) writes nothing here, and a
 * change of one attribute rewrites that attribute's rows and the operational ones it moved,
 * not the entry's every value: each row written is an entry in three indexes, the trigram
 * one the dearest.
 *
 * The fold is PostgreSQL's `lower()` under the database's collation, computed here exactly as
 * the filters fold the value they compare with, so an indexed comparison and the comparison
 * over the JSON it replaces agree value for value. Values are the merged user and operational
 * attributes (an attribute is one or the other, never both). JSON nulls and non-array
 * attributes hold no value; values are never empty arrays.
 */
export async function indexEntryValues(
  db: Queryable,
  table: (name: string) => string,
  uuids: readonly string[],
): Promise<void> {
  if (uuids.length === 0) return;
  const values = table("entry_values");
  const counts = table("entry_value_counts");
  const wanted = wantedRows(table("entries"));
  // Rows unlike every wanted row go (value_folded is NULL or longer than a key, never ''),
  // and the entries counted by their first values lose them.
  await db.query(
    `WITH wanted AS MATERIALIZED (${wanted}),
          gone AS (DELETE FROM ${values} AS v
                    WHERE v.entry_uuid = ANY($1::uuid[])
                      AND NOT EXISTS (
                            SELECT FROM wanted AS w
                             WHERE w.entry_uuid = v.entry_uuid AND w.attribute = v.attribute
                               AND w.ordinal = v.ordinal AND w.type = v.type
                               AND w.value_key = v.value_key
                               AND coalesce(w.value_folded, '') = coalesce(v.value_folded, ''))
                   RETURNING type, attribute, ordinal),
          lost AS (SELECT type, attribute, count(*) AS n FROM gone WHERE ordinal = 0
                   GROUP BY type, attribute)
     UPDATE ${counts} AS c SET entries = c.entries - lost.n
       FROM lost WHERE c.type = lost.type AND c.attribute = lost.attribute`,
    [uuids, ENTRY_ROW_ATTRIBUTE, VALUE_KEY_LENGTH],
  );
  // What is left of an entry's rows is wanted as it is: a wanted row whose key is taken is
  // that very row.
  await db.query(
    `WITH added AS (
       INSERT INTO ${values} (entry_uuid, type, attribute, ordinal, value_key, value_folded)
       ${wanted}
       ON CONFLICT (entry_uuid, attribute, ordinal) DO NOTHING
       RETURNING type, attribute, ordinal),
          gained AS (SELECT type, attribute, count(*) AS n FROM added WHERE ordinal = 0
                     GROUP BY type, attribute)
     INSERT INTO ${counts} AS c (type, attribute, entries)
     SELECT type, attribute, n FROM gained
     ON CONFLICT (type, attribute) DO UPDATE SET entries = c.entries + EXCLUDED.entries`,
    [uuids, ENTRY_ROW_ATTRIBUTE, VALUE_KEY_LENGTH],
  );
  await db.query(`DELETE FROM ${counts} WHERE entries = 0`);
}

/**
 * The `entry_values` rows the entries `$1` should have, by their rows in `entries`: one row
 * named `$2` per typed entry, and one per value, folded, its key cut at `$3` characters.
 */
function wantedRows(entries: string): string {
  return `SELECT e.entry_uuid, e.type, $2::text AS attribute, 0 AS ordinal,
                 ''::text COLLATE "C" AS value_key, NULL::text COLLATE "C" AS value_folded
            FROM ${entries} AS e
           WHERE e.entry_uuid = ANY($1::uuid[]) AND e.type IS NOT NULL
          UNION ALL
          SELECT e.entry_uuid, e.type, a.name, (v.n - 1)::integer,
                 left(f.folded, $3) COLLATE "C",
                 (CASE WHEN length(f.folded) > $3 THEN f.folded END) COLLATE "C"
            FROM ${entries} AS e
           CROSS JOIN LATERAL jsonb_each(e.attributes || e.operational) AS a(name, list)
           CROSS JOIN LATERAL jsonb_array_elements_text(
                   CASE WHEN jsonb_typeof(a.list) = 'array' THEN a.list ELSE '[]'::jsonb END)
                 WITH ORDINALITY AS v(value, n)
           CROSS JOIN LATERAL (SELECT lower(v.value) AS folded) AS f
           WHERE e.entry_uuid = ANY($1::uuid[]) AND e.type IS NOT NULL AND v.value IS NOT NULL`;
}
