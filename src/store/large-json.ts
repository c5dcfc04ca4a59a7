import type { Queryable } from "../db/index.ts";
import { runInSlices, type Slices } from "../slices.ts";

/**
 * From how many bytes of an event's data as stored (`pg_column_size`: compressed, as the row
 * holds it) it is read in chunks (`readJsonInChunks`) rather than as one value. A change to a
 * group of 100,000 members holds both its states, 11 MB of JSON (about 1 MB stored), which pg
 * parsed with one `JSON.parse` as the row arrived, holding the event loop 50 ms and more.
 */
export const LARGE_DATA_BYTES = 128 * 1024;

/** Elements of a large array a chunk holds: `JSON.parse` of 10,000 DNs takes about 2 ms. */
const CHUNK_ELEMENTS = 10_000;
/** A part of the value no larger than this (bytes, as jsonb) is sent whole. */
const WHOLE_BYTES = 64 * 1024;

/**
 * A jsonb value read in chunks: `source` is a query of one row whose column `value` is the
 * value (its parameters `params`). PostgreSQL walks the value's large parts (more than
 * `WHOLE_BYTES`): a large object or array is sent as a row saying so and its members each in
 * turn, an array of more than `CHUNK_ELEMENTS` elements as chunks of that many, anything
 * smaller whole. pg parses each row as it arrives, so no parse holds more than a chunk, and
 * the event loop turns between them. The value is put back together here, a chunk at a time:
 * the same value, its objects' keys in jsonb's order, as reading it whole gives.
 *
 * @example
 * await readJsonInChunks(db, "SELECT data AS value FROM events WHERE position = $1", [42]);
 */
export async function readJsonInChunks(
  db: Queryable,
  source: string,
  params: readonly unknown[],
): Promise<unknown> {
  const n = `$${params.length + 1}::int`;
  const bytes = `$${params.length + 2}::int`;
  const big = (value: string) => `pg_column_size(${value}) > ${bytes}`;
  const result = await db.query<[string[], number, unknown]>({
    text: `WITH RECURSIVE doc AS MATERIALIZED (${source}),
      walk AS (
        SELECT ARRAY[]::text[] AS path, ARRAY[]::bigint[] AS ord, d.value FROM doc AS d
        UNION ALL
        SELECT w.path || k.key, w.ord || k.n, k.value
          FROM walk AS w
         CROSS JOIN LATERAL (
               SELECT o.key, o.n, o.value
                 FROM jsonb_each(CASE WHEN jsonb_typeof(w.value) = 'object' AND ${big("w.value")}
                                      THEN w.value ELSE '{}' END)
                      WITH ORDINALITY AS o(key, value, n)
               UNION ALL
               SELECT (a.n - 1)::text, a.n, a.value
                 FROM jsonb_array_elements(
                        CASE WHEN jsonb_typeof(w.value) = 'array' AND ${big("w.value")}
                              AND jsonb_array_length(w.value) <= ${n} THEN w.value ELSE '[]' END)
                      WITH ORDINALITY AS a(value, n)) AS k)
      SELECT w.path, c.part, c.value
        FROM walk AS w
       CROSS JOIN LATERAL (
             SELECT -1 AS part, NULL::jsonb AS value
              WHERE jsonb_typeof(w.value) = 'object' AND ${big("w.value")}
             UNION ALL
             SELECT -2, NULL
              WHERE jsonb_typeof(w.value) = 'array' AND ${big("w.value")}
                AND jsonb_array_length(w.value) <= ${n}
             UNION ALL
             SELECT 0, w.value
              WHERE jsonb_typeof(w.value) NOT IN ('object', 'array') OR NOT ${big("w.value")}
             UNION ALL
             SELECT g.i + 1,
                    jsonb_path_query_array(w.value, format('$[%s to %s]', g.i * ${n},
                      least((g.i + 1) * ${n}, jsonb_array_length(w.value)) - 1)::jsonpath)
               FROM generate_series(0, (jsonb_array_length(w.value) - 1) / ${n}) AS g(i)
              WHERE jsonb_typeof(w.value) = 'array' AND ${big("w.value")}
                AND jsonb_array_length(w.value) > ${n}) AS c
       ORDER BY w.ord, c.part`,
    values: [...params, CHUNK_ELEMENTS, WHOLE_BYTES],
    rowMode: "array",
  });
  return runInSlices(assemble(result.rows));
}

/** The value the rows of `readJsonInChunks` describe, in document order; a turn per chunk. */
function* assemble(rows: readonly [string[], number, unknown][]): Slices<unknown> {
  const root: { value?: unknown } = {};
  for (const [path, part, value] of rows) {
    // The object or array that holds the path's last step, made as the rows come.
    let parent: Record<string, unknown> = root;
    let key = "value";
    for (const step of path) {
      parent = parent[key] as Record<string, unknown>;
      key = step;
    }
    // An array's members are named by their index, which sets them in order.
    if (part === -1) parent[key] = {};
    else if (part === -2) parent[key] = [];
    else if (part === 0) parent[key] = value;
    else {
      if (part === 1) parent[key] = [];
      const elements = parent[key] as unknown[];
      for (const element of value as unknown[]) elements.push(element);
      yield;
    }
  }
  return root.value ?? null;
}
