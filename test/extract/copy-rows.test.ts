import t from "tap";
import { copyRows } from "../../src/extract/copy-rows.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * The extract reads its rows with `COPY (SELECT …) TO STDOUT`: each row must be the object
 * `client.query` gives for the same SELECT (pg's parsers on PostgreSQL's text of each value,
 * once COPY's escapes are undone), and a reading stopped early must leave the client usable.
 */
t.setTimeout(300_000);

const { pool } = await testDatabase(t);

const awkward = [
  "tab\there",
  "line\nbreak",
  "carriage\rreturn",
  "back\\slash \\N \\t",
  "\\N",
  "",
  "bell\u0007 \b \f \v",
  "Müller 日本 😀",
];

t.test("rows are what a query gives, escapes and types included", async (t) => {
  const sql = `SELECT g AS n, g::bigint * 1000000000000 AS big, $1::text[] AS texts,
                      ($1::text[])[1 + g % ${awkward.length}] AS text,
                      CASE WHEN g % 3 = 0 THEN NULL ELSE g END AS maybe,
                      jsonb_build_object('values', $1::text[], 'g', g) AS doc,
                      '2026-11-25 09:03:13.123456+00'::timestamptz + g * interval '1 day' AS at,
                      md5(g::text)::uuid AS id, g % 2 = 0 AS even, $2::xid8 AS xid
                 FROM generate_series(1, 2500) AS g ORDER BY g`;
  const params = [awkward, "12345"];
  const expected = (await pool.query(sql, params)).rows;
  const client = await pool.connect();
  t.teardown(() => client.release());
  const batches: Record<string, unknown>[][] = [];
  for await (const batch of copyRows(client, { sql, params }, 1000)) batches.push(batch);
  t.same(
    batches.map((batch) => batch.length),
    [1000, 1000, 500],
  );
  t.strictSame(batches.flat(), expected);
  t.equal(batches[0]![0]!.text, awkward[1]);
});

t.test("a reading stopped early is cancelled, and the client goes on", async (t) => {
  const client = await pool.connect();
  t.teardown(() => client.release());
  await client.query("BEGIN");
  const sql = "SELECT g, repeat('x', 200) AS filler FROM generate_series(1, 2000000) AS g";
  let read = 0;
  for await (const batch of copyRows(client, { sql, params: [] }, 1000)) {
    read += batch.length;
    if (read >= 3000) break;
  }
  t.equal(read, 3000);
  // The statement failed (cancelled): the transaction is to be rolled back, then the client
  // answers as before.
  await client.query("ROLLBACK");
  const { rows } = await client.query<{ one: number }>("SELECT 1 AS one");
  t.same(rows, [{ one: 1 }]);
});

t.test("an error of the query is the reading's error", async (t) => {
  const client = await pool.connect();
  t.teardown(() => client.release());
  const reading = async () => {
    for await (const batch of copyRows(
      client,
      { sql: "SELECT 1 / (g - 500) AS x FROM generate_series(1, 1000) AS g", params: [] },
      100,
    )) {
      t.ok(batch.length > 0);
    }
  };
  await t.rejects(reading(), /division by zero/);
  const { rows } = await client.query<{ one: number }>("SELECT 1 AS one");
  t.same(rows, [{ one: 1 }]);
});
