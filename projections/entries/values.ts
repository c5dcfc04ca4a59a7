import type { Queryable } from "../../src/db/index.ts";
import { ENTRY_ROW_ATTRIBUTE, VALUE_KEY_LENGTH } from "./tables.ts";

/**
 * Brings `entry_values` and `entry_value_counts` in line with `entries` for the given entries
 * (an entry deleted from `entries` loses its rows), in four set-based statements whatever the
 * number of entries and values: called once per batch, after the batch's rows are written.
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
  await db.query(
    `WITH gone AS (DELETE FROM ${values} WHERE entry_uuid = ANY($1::uuid[])
                   RETURNING type, attribute, ordinal),
          lost AS (SELECT type, attribute, count(*) AS n FROM gone WHERE ordinal = 0
                   GROUP BY type, attribute)
     UPDATE ${counts} AS c SET entries = c.entries - lost.n
       FROM lost WHERE c.type = lost.type AND c.attribute = lost.attribute`,
    [uuids],
  );
  await db.query(
    `WITH added AS (
       INSERT INTO ${values} (entry_uuid, type, attribute, ordinal, value_key, value_folded)
       SELECT e.entry_uuid, e.type, $2::text, 0, '', NULL
         FROM ${table("entries")} AS e
        WHERE e.entry_uuid = ANY($1::uuid[]) AND e.type IS NOT NULL
       UNION ALL
       SELECT e.entry_uuid, e.type, a.name, (v.n - 1)::integer,
              left(f.folded, $3), CASE WHEN length(f.folded) > $3 THEN f.folded END
         FROM ${table("entries")} AS e
        CROSS JOIN LATERAL jsonb_each(e.attributes || e.operational) AS a(name, list)
        CROSS JOIN LATERAL jsonb_array_elements_text(
                CASE WHEN jsonb_typeof(a.list) = 'array' THEN a.list ELSE '[]'::jsonb END)
              WITH ORDINALITY AS v(value, n)
        CROSS JOIN LATERAL (SELECT lower(v.value) AS folded) AS f
        WHERE e.entry_uuid = ANY($1::uuid[]) AND e.type IS NOT NULL AND v.value IS NOT NULL
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
