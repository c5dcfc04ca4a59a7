import t from "tap";
import { packText, strings, unpack, type ColumnBatch } from "../../src/extract/columns.ts";
import { copyColumns } from "../../src/extract/copy-rows.ts";
import type { ColumnSpec } from "../../src/extract/parquet.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * The extract reads its rows with `COPY (SELECT …) TO STDOUT`, column by column: each column
 * must hold what `client.query` gives for the same SELECT (once COPY's escapes are undone, in
 * its kind's form: 64-bit integers as bigints, times as milliseconds, UUIDs as their bytes,
 * text as UTF-8, lists as lists), batch after batch, and a reading stopped early must leave
 * the client usable.
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

const utf8 = new TextDecoder();

/** A column's values as plain JavaScript: strings, bigints, numbers, booleans, lists, null. */
function plain(spec: ColumnSpec, values: ArrayLike<unknown>): unknown[] {
  const one = (value: unknown): unknown => {
    if (value === null) return null;
    if (spec.kind === "uuid") {
      const hex = Buffer.from(value as Uint8Array).toString("hex");
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    }
    if (value instanceof Uint8Array) return utf8.decode(value);
    return value;
  };
  return Array.from(values, (value) =>
    spec.list && value !== null ? (value as unknown[]).map(one) : one(value),
  );
}

t.test("columns hold what a query gives, escapes and types included", async (t) => {
  const sql = `SELECT g AS n, g::bigint * 1000000000000 AS big, to_jsonb($1::text[]) AS texts,
                      ($1::text[])[1 + g % ${awkward.length}] AS text,
                      CASE WHEN g % 3 = 0 THEN NULL ELSE g END AS maybe,
                      CASE WHEN g % 5 = 0 THEN NULL
                           ELSE jsonb_build_object('values', $1::text[], 'g', g) END AS doc,
                      floor(extract(epoch FROM '2026-11-25 09:03:13.123456+00'::timestamptz
                                               + g * interval '1 day') * 1000)::int8 AS at,
                      CASE WHEN g % 4 = 0 THEN NULL ELSE md5(g::text)::uuid END AS id,
                      g % 2 = 0 AS even, $2::xid8::text AS xid,
                      CASE WHEN g % 6 = 0 THEN NULL ELSE -g::bigint END AS minus
                 FROM generate_series(1, 2500) AS g ORDER BY g`;
  const specs: ColumnSpec[] = [
    { name: "n", kind: "int32" },
    { name: "big", kind: "int64" },
    { name: "texts", kind: "string", list: true },
    { name: "text", kind: "string" },
    { name: "maybe", kind: "int32" },
    { name: "doc", kind: "json" },
    { name: "at", kind: "timestamp" },
    { name: "id", kind: "uuid" },
    { name: "even", kind: "boolean" },
    { name: "xid", kind: "int64" },
    { name: "minus", kind: "int64" },
  ];
  const params = [awkward, "12345"];
  const rows = (await pool.query(sql, params)).rows as Record<string, unknown>[];
  const client = await pool.connect();
  t.teardown(() => client.release());
  const batches: ColumnBatch[] = [];
  for await (const batch of copyColumns(client, { sql, params }, specs, 1000)) {
    batches.push(batch);
  }
  t.same(
    batches.map((batch) => batch.rows),
    [1000, 1000, 500],
  );
  for (const [i, spec] of specs.entries()) {
    const read = batches.flatMap((batch) => plain(spec, unpack(batch.columns[i]!)));
    const expected = rows.map((row) => {
      const value = row[spec.name];
      if (value === null) return null;
      if (spec.kind === "int64") return BigInt(value as string);
      if (spec.kind === "timestamp") return Number(value);
      return value;
    });
    const got =
      spec.kind === "json"
        ? read.map((text) => (text === null ? null : JSON.parse(text as string)))
        : read;
    t.strictSame(got, expected, spec.name);
  }
  t.equal(plain(specs[3]!, unpack(batches[0]!.columns[3]!))[0], awkward[1]);
});

t.test("a reading stopped early is cancelled, and the client goes on", async (t) => {
  const client = await pool.connect();
  t.teardown(() => client.release());
  await client.query("BEGIN");
  const sql = "SELECT g, repeat('x', 200) AS filler FROM generate_series(1, 2000000) AS g";
  let read = 0;
  const specs: ColumnSpec[] = [
    { name: "g", kind: "int32" },
    { name: "filler", kind: "string" },
  ];
  for await (const batch of copyColumns(client, { sql, params: [] }, specs, 1000)) {
    read += batch.rows;
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
    for await (const batch of copyColumns(
      client,
      { sql: "SELECT 1 / (g - 500) AS x FROM generate_series(1, 1000) AS g", params: [] },
      [{ name: "x", kind: "int32" }],
      100,
    )) {
      t.ok(batch.rows > 0);
    }
  };
  await t.rejects(reading(), /division by zero/);
  const { rows } = await client.query<{ one: number }>("SELECT 1 AS one");
  t.same(rows, [{ one: 1 }]);
});

t.test("a text column is joined, encoded and decoded in pieces when long", async (t) => {
  const values = ["", "a", "Müller 日本 😀", "x".repeat(25), "", "tab\there", "z".repeat(3), ""];
  const nulls = new Uint8Array([0, 0, 0, 0, 1, 0, 0, 0]);
  const expected = values.map((value, i) => (nulls[i] ? null : value));
  for (const limit of [1, 5, 10, 30, 1 << 26]) {
    const packed = packText(values, nulls, limit);
    t.strictSame(strings(packed, limit), expected, `joined and cut ${limit} at a time`);
    t.strictSame(strings(packed), expected, `joined ${limit} at a time, cut at once`);
    t.strictSame(
      plain({ name: "s", kind: "string" }, unpack(packed)),
      expected,
      `as views of its bytes, ${limit} at a time`,
    );
  }
});
