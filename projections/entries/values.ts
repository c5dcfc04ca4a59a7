import type { Queryable } from "../../src/db/index.ts";
import { ENTRY_ROW_ATTRIBUTE, VALUE_KEY_LENGTH } from "./tables.ts";

/**
 * Brings `entry_values` and `entry_value_counts` in line with `entries` for the given entries
 * (an entry deleted from `entries` loses its rows), in two set-based statements whatever the
 * number of entries and values: called once per batch, after the batch's rows are written.
 *
 * Only what changed is written. The rows the entries should have (`wantedRows`) are matched
 * with those they have by key (entry, attribute, ordinal): a row no longer wanted goes, a row
 * whose type or value changed is updated, a wanted row missing comes. An entry snapshotted
 * again unchanged (periodic snapshots, a second import) writes nothing here, and a change of
 * one attribute rewrites that attribute's rows and the operational ones it moved, not the
 * entry's every value: each row written is an entry in three indexes, the trigram one the
 * dearest. Each row is touched by one of the three at most, so they run in one statement.
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
  // A row of the diff by its key, and the entries' uuids again: without them the first
  // snapshot of 10,000 entries took a quarter longer (12.5 to 13.2 s against 9.8 to 10.4 in
  // alternating runs), probably the diff joined to more of the table than these entries' rows.
  const same = `v.entry_uuid = ANY($1::uuid[]) AND v.entry_uuid = d.x_uuid
                AND v.attribute = d.x_attribute AND v.ordinal = d.x_ordinal`;
  await db.query(
    `WITH wanted AS MATERIALIZED (${wantedRows(table("entries"))}),
          diff AS MATERIALIZED (
            SELECT w.entry_uuid AS w_uuid, w.type AS w_type, w.attribute AS w_attribute,
                   w.ordinal AS w_ordinal, w.value_key AS w_key, w.value_folded AS w_folded,
                   x.entry_uuid AS x_uuid, x.type AS x_type, x.attribute AS x_attribute,
                   x.ordinal AS x_ordinal
              FROM wanted AS w
              FULL JOIN (SELECT * FROM ${values} WHERE entry_uuid = ANY($1::uuid[])) AS x
                ON x.entry_uuid = w.entry_uuid AND x.attribute = w.attribute
               AND x.ordinal = w.ordinal
             WHERE w.entry_uuid IS NULL OR x.entry_uuid IS NULL OR x.type <> w.type
                OR x.value_key <> w.value_key OR x.value_folded IS DISTINCT FROM w.value_folded),
          gone AS (DELETE FROM ${values} AS v USING diff AS d
                    WHERE d.w_uuid IS NULL AND ${same}
                   RETURNING v.type, v.attribute, v.ordinal),
          changed AS (UPDATE ${values} AS v
                         SET type = d.w_type, value_key = d.w_key, value_folded = d.w_folded
                        FROM diff AS d
                       WHERE d.w_uuid IS NOT NULL AND ${same}
                      RETURNING d.x_type AS was, v.type, v.attribute, v.ordinal),
          added AS (INSERT INTO ${values}
                      (entry_uuid, type, attribute, ordinal, value_key, value_folded)
                    SELECT w_uuid, w_type, w_attribute, w_ordinal, w_key, w_folded
                      FROM diff WHERE x_uuid IS NULL
                    RETURNING type, attribute, ordinal),
          -- An entry counts for a type and attribute by its first value (ordinal 0).
          moved AS (SELECT type, attribute, -1 AS n FROM gone WHERE ordinal = 0
                    UNION ALL SELECT type, attribute, 1 FROM added WHERE ordinal = 0
                    UNION ALL SELECT was, attribute, -1 FROM changed
                               WHERE ordinal = 0 AND was <> type
                    UNION ALL SELECT type, attribute, 1 FROM changed
                               WHERE ordinal = 0 AND was <> type),
          summed AS (SELECT type, attribute, sum(n)::bigint AS n FROM moved
                      GROUP BY type, attribute HAVING sum(n) <> 0)
     INSERT INTO ${counts} AS c (type, attribute, entries)
     SELECT type, attribute, n FROM summed
     ON CONFLICT (type, attribute) DO UPDATE SET entries = c.entries + EXCLUDED.entries`,
    [uuids, ENTRY_ROW_ATTRIBUTE, VALUE_KEY_LENGTH],
  );
  await db.query(`DELETE FROM ${counts} WHERE entries = 0`);
}

/**
 * `entry_values` and `entry_value_counts` for entries that have no rows there yet (a run of
 * first snapshots, `insertFirstSnapshots`): what `indexEntryValues` writes for them, where
 * every wanted row is missing, in one statement without matching rows that cannot exist.
 */
export async function insertEntryValues(
  db: Queryable,
  table: (name: string) => string,
  uuids: readonly string[],
): Promise<void> {
  if (uuids.length === 0) return;
  await db.query(
    `WITH added AS (INSERT INTO ${table("entry_values")}
                      (entry_uuid, type, attribute, ordinal, value_key, value_folded)
                    ${wantedRows(table("entries"))}
                    RETURNING type, attribute, ordinal)
     INSERT INTO ${table("entry_value_counts")} AS c (type, attribute, entries)
     SELECT type, attribute, count(*) FROM added WHERE ordinal = 0 GROUP BY type, attribute
     ON CONFLICT (type, attribute) DO UPDATE SET entries = c.entries + EXCLUDED.entries`,
    [uuids, ENTRY_ROW_ATTRIBUTE, VALUE_KEY_LENGTH],
  );
}

/**
 * `entry_values` and `entry_value_counts` for every entry, into empty tables (a replay's,
 * `entriesReplay`): what `insertEntryValues` writes, in one statement over the whole table.
 * The value index's key is built after the load, in one sorted pass, as a first start does.
 */
export async function insertAllEntryValues(
  db: Queryable,
  table: (name: string) => string,
): Promise<void> {
  const values = table("entry_values");
  await db.query(`ALTER TABLE ${values} DROP CONSTRAINT entry_values_pkey`);
  await db.query(
    `WITH added AS (INSERT INTO ${values}
                      (entry_uuid, type, attribute, ordinal, value_key, value_folded)
                    ${wantedRows(table("entries"), "true", "$1", "$2")}
                    RETURNING type, attribute, ordinal)
     INSERT INTO ${table("entry_value_counts")} (type, attribute, entries)
     SELECT type, attribute, count(*) FROM added WHERE ordinal = 0 GROUP BY type, attribute`,
    [ENTRY_ROW_ATTRIBUTE, VALUE_KEY_LENGTH],
  );
  await db.query(
    `ALTER TABLE ${values} ADD CONSTRAINT entry_values_pkey
       PRIMARY KEY (entry_uuid, attribute, ordinal)`,
  );
}

/**
 * The `entry_values` rows the entries `where` picks (by default those of the uuids `$1`)
 * should have, by their rows in `entries` (`e`): one row named `attribute` (`$2`) per typed
 * entry, and one per value, folded, its key cut at `keyLength` (`$3`) characters.
 */
function wantedRows(
  entries: string,
  where = "e.entry_uuid = ANY($1::uuid[])",
  attribute = "$2",
  keyLength = "$3",
): string {
  return `SELECT e.entry_uuid, e.type, ${attribute}::text AS attribute, 0 AS ordinal,
                 ''::text COLLATE "C" AS value_key, NULL::text COLLATE "C" AS value_folded
            FROM ${entries} AS e
           WHERE ${where} AND e.type IS NOT NULL
          UNION ALL
          SELECT e.entry_uuid, e.type, a.name, (v.n - 1)::integer,
                 left(f.folded, ${keyLength}) COLLATE "C",
                 (CASE WHEN length(f.folded) > ${keyLength} THEN f.folded END) COLLATE "C"
            FROM ${entries} AS e
           CROSS JOIN LATERAL jsonb_each(e.attributes || e.operational) AS a(name, list)
           CROSS JOIN LATERAL jsonb_array_elements_text(
                   CASE WHEN jsonb_typeof(a.list) = 'array' THEN a.list ELSE '[]'::jsonb END)
                 WITH ORDINALITY AS v(value, n)
           CROSS JOIN LATERAL (SELECT lower(v.value) AS folded) AS f
           WHERE ${where} AND e.type IS NOT NULL AND v.value IS NOT NULL`;
}
