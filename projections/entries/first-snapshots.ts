import { setImmediate as turn } from "node:timers/promises";
import { normalizeDN } from "../../src/directory/index.ts";
import {
  copyRows,
  type FirstSnapshots,
  type ProjectionContext,
} from "../../src/projector/index.ts";
import {
  LARGE_DATA_BYTES,
  logOrder,
  logPositionCompare,
  type LogPosition,
} from "../../src/store/index.ts";
import { generalizedTime } from "../entry-events.ts";
import { ENTRY_ROW_COLUMNS } from "./row.ts";
import { ENTRY_ROW_ATTRIBUTE, VALUE_KEY_LENGTH } from "./tables.ts";
import { insertEntryValues } from "./values.ts";

/** Events read into Node at a time: a page's rows and values are sent with one COPY each. */
const PAGE = 1_000;

/**
 * Events worked out between two turns of the event loop: a page's thousand hold it some 70 ms
 * of CPU (7.3 s at 100,000 people), while the process's requests wait.
 */
const SLICE_EVENTS = 100;

/**
 * `entries` for a run of first snapshots (`Projection.applyFirstSnapshots`): what `apply`
 * writes for an entry whose first event is a snapshot, set-wise, and the value index for these
 * entries, which have no rows there yet.
 *
 * The events are read a page at a time, each entry's row worked out as `entryRow` works it
 * out for `apply` and a replay (its attributes sent as the log's JSON text), its values spread
 * here, and both written with COPY (`copySnapshotPages`). Made in PostgreSQL from the events'
 * JSON and written by `INSERT … SELECT`, one WAL record and one heap insert a row, the same
 * rows at 100,000 people cost 14.7 s of the backend's CPU, 735 MB of WAL and 93,000 pages
 * written by the backend itself; by COPY, 10.0 s, 536 MB and 33,000, beside 7.3 s of Node's
 * CPU (bench/RESULTS.md, first start). An event whose data is large as stored
 * (`LARGE_DATA_BYTES`: a group of many members) is left to PostgreSQL as before
 * (`insertLargeSnapshots`): read into Node, its JSON would be parsed whole.
 */
export async function insertFirstSnapshots(
  run: FirstSnapshots,
  context: ProjectionContext,
): Promise<void> {
  const { tx, table } = context;
  const values = table("entry_values");
  // An empty value index loaded with many entries' values is keyed after the load, in one
  // sorted build, rather than row by row: its key took 40% of the values' statement at 10,000
  // entries (bench/RESULTS.md, first start). Put back in the run's last chunk, in this
  // transaction: `apply` upserts by it.
  if (run.first && (await isEmpty(tx, values))) {
    await tx.query(`ALTER TABLE ${values} DROP CONSTRAINT entry_values_pkey`);
  }
  const leftToSql = await copySnapshotPages(run, context);
  leftToSql.push(...(await insertLargeSnapshots(run, context)));
  await insertEntryValues(tx, table, leftToSql);
  if (run.last && !(await hasPrimaryKey(tx, values))) {
    await tx.query("SET LOCAL maintenance_work_mem = '256MB'");
    await tx.query(
      `ALTER TABLE ${values} ADD CONSTRAINT entry_values_pkey
         PRIMARY KEY (entry_uuid, attribute, ordinal)`,
    );
  }
}

/** A snapshot as the COPY path reads it (`copySnapshotPages`). */
type SnapshotRow = [
  transactionId: string,
  position: string,
  version: string,
  occurredAt: Date,
  uuid: string,
  type: string | null,
  dn: string,
  attributes: string,
  operational: string,
];

/** A row of `entry_values`, in `VALUE_COLUMNS` order. */
type ValueRow = [string, string, string, number, string, string | null];

const VALUE_COLUMNS = ["entry_uuid", "type", "attribute", "ordinal", "value_key", "value_folded"];

/**
 * The run's events of ordinary size, page by page: their rows of `entries` and `entry_values`
 * written with COPY, and `entry_value_counts` added to once. Returns the entries whose values
 * are left to `insertEntryValues` (a value that is not a JSON string: its text is
 * PostgreSQL's to make).
 *
 * The fold is the database's `lower()`, as everywhere in `entry_values` (`indexEntryValues`):
 * a value of ASCII characters alone is folded here, when the database's `lower()` of every
 * ASCII character is JavaScript's (`asciiFoldsAsJs`: no Turkish dotless i), and every other
 * value is sent to PostgreSQL to fold, its distinct values once a page. JavaScript's
 * `toLowerCase` differs from `lower()` beyond ASCII under the collations annal meets ('İ',
 * Greek final sigma; test/projector/first-snapshots), and ASCII characters fold one by one
 * under every provider (libc, ICU, builtin), so the ASCII test is the whole proof.
 */
async function copySnapshotPages(
  run: FirstSnapshots,
  { tx, table }: ProjectionContext,
): Promise<string[]> {
  const asciiByJs = await asciiFoldsAsJs(tx);
  const counts = new Map<string, { type: string; attribute: string; entries: number }>();
  const leftToSql: string[] = [];
  let after: LogPosition | undefined;
  for (;;) {
    const params: unknown[] = [];
    const from = run.from(params);
    const later = after ? `AND ${logPositionCompare("e", ">", after, params)}` : "";
    params.push(LARGE_DATA_BYTES, PAGE);
    // The user and operational attributes as the log's JSON text: parsed once here for their
    // values, and sent to `entries` as they came (pg would parse the event's data whole, and
    // the COPY make its JSON again: two thirds of Node's time in this build at 10,000).
    const { rows } = await tx.query<SnapshotRow>({
      text: `SELECT e.transaction_id, e.position, e.stream_version, e.occurred_at,
                    e.data->>'entryUUID', e.data->'state'->>'type', e.data->'state'->>'dn',
                    (e.data->'state'->'attributes')::text, (e.data->'state'->'operational')::text
               FROM ${from} ${later} AND pg_column_size(e.data) <= $${params.length - 1}
              ORDER BY ${logOrder("e")} LIMIT $${params.length}`,
      values: params,
      rowMode: "array",
    });
    if (rows.length === 0) break;
    const entryRows: unknown[][] = [];
    const valueRows: ValueRow[] = [];
    /** Rows whose value PostgreSQL folds, and the value. */
    const toFold: { row: ValueRow; value: string }[] = [];
    let worked = 0;
    for (const [
      transactionId,
      position,
      version,
      occurredAt,
      uuid,
      type,
      dn,
      attributesText,
      operationalText,
    ] of rows) {
      if (++worked % SLICE_EVENTS === 0) await turn();
      after = { transactionId, position: Number(position) };
      const attributes = JSON.parse(attributesText) as AttributeLists;
      const operational = JSON.parse(operationalText) as Readonly<
        Record<string, string[] | undefined>
      >;
      // As `apply` (`entryRow`): created at the entry's createTimestamp, modified at its
      // modifyTimestamp (the last event is a snapshot), each the event's time when it has none.
      entryRows.push([
        uuid,
        type,
        dn,
        normalizeDN(dn),
        attributesText,
        operationalText,
        generalizedTime(operational.createTimestamp?.[0]) ?? occurredAt,
        generalizedTime(operational.modifyTimestamp?.[0]) ?? occurredAt,
        version,
        position,
        position,
        transactionId,
      ]);
      if (type === null) continue;
      const spread = spreadValues(uuid, type, attributes, operational, asciiByJs);
      if (!spread) {
        leftToSql.push(uuid);
        continue;
      }
      valueRows.push(...spread.rows);
      toFold.push(...spread.toFold);
      for (const value of spread.rows) {
        if (value[3] !== 0) continue;
        const key = `${value[1]}\0${value[2]}`;
        const count = counts.get(key) ?? { type: value[1], attribute: value[2], entries: 0 };
        count.entries++;
        counts.set(key, count);
      }
    }
    await foldInDatabase(tx, toFold);
    await copyRows(
      tx,
      `COPY ${table("entries")} (${ENTRY_ROW_COLUMNS.join(", ")}) FROM STDIN`,
      entryRows,
    );
    await copyRows(
      tx,
      `COPY ${table("entry_values")} (${VALUE_COLUMNS.join(", ")}) FROM STDIN`,
      valueRows,
    );
    if (rows.length < PAGE) break;
  }
  if (counts.size > 0) {
    const all = [...counts.values()];
    await tx.query(
      `INSERT INTO ${table("entry_value_counts")} AS c (type, attribute, entries)
       SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
       ON CONFLICT (type, attribute) DO UPDATE SET entries = c.entries + EXCLUDED.entries`,
      [all.map((c) => c.type), all.map((c) => c.attribute), all.map((c) => c.entries)],
    );
  }
  return leftToSql;
}

type AttributeLists = Readonly<Record<string, unknown>>;

/**
 * A typed entry's rows of `entry_values`, as `wantedRows` makes them in SQL: one named
 * `ENTRY_ROW_ATTRIBUTE`, and one a value of its user and operational attributes (the
 * operational list where both name one), at its place in the list, JSON nulls left out. A
 * value `asciiByJs` does not cover is put in `toFold` with its row, whose key and folded value
 * are filled in there. Undefined when a value is not a JSON string (PostgreSQL makes its text).
 */
function spreadValues(
  uuid: string,
  type: string,
  attributes: AttributeLists,
  operational: AttributeLists,
  asciiByJs: boolean,
): { rows: ValueRow[]; toFold: { row: ValueRow; value: string }[] } | undefined {
  const rows: ValueRow[] = [[uuid, type, ENTRY_ROW_ATTRIBUTE, 0, "", null]];
  const toFold: { row: ValueRow; value: string }[] = [];
  const lists = new Map<string, unknown>(Object.entries(attributes));
  for (const [name, list] of Object.entries(operational)) lists.set(name, list);
  for (const [name, list] of lists) {
    if (!Array.isArray(list)) continue;
    for (let i = 0; i < list.length; i++) {
      const value: unknown = list[i];
      if (value === null) continue;
      if (typeof value !== "string") return undefined;
      if (asciiByJs && ASCII.test(value)) {
        const folded = value.toLowerCase();
        const long = folded.length > VALUE_KEY_LENGTH;
        rows.push([
          uuid,
          type,
          name,
          i,
          long ? folded.slice(0, VALUE_KEY_LENGTH) : folded,
          long ? folded : null,
        ]);
      } else {
        const row: ValueRow = [uuid, type, name, i, "", null];
        rows.push(row);
        toFold.push({ row, value });
      }
    }
  }
  return { rows, toFold };
}

const ASCII = /^[\x00-\x7f]*$/;

/** Every ASCII character but NUL (which text cannot hold), in order. */
const ASCII_CHARACTERS = String.fromCharCode(...Array.from({ length: 127 }, (_, i) => i + 1));

/**
 * Whether the database's `lower()` (under its default collation, which the value index's
 * fold uses) turns each ASCII character into what JavaScript's `toLowerCase` does: A–Z into
 * a–z and the others into themselves. Not so under a Turkish collation ('I' becomes 'ı').
 */
async function asciiFoldsAsJs(tx: ProjectionContext["tx"]): Promise<boolean> {
  const { rows } = await tx.query<{ folded: string }>("SELECT lower($1::text) AS folded", [
    ASCII_CHARACTERS,
  ]);
  return rows[0]?.folded === ASCII_CHARACTERS.toLowerCase();
}

/**
 * Fills in the rows' key and folded value from PostgreSQL's fold of their values, as
 * `wantedRows` computes them: `lower()`, its first `VALUE_KEY_LENGTH` characters as the key,
 * the whole when longer. Each distinct value is sent once.
 */
async function foldInDatabase(
  tx: ProjectionContext["tx"],
  toFold: readonly { row: ValueRow; value: string }[],
): Promise<void> {
  if (toFold.length === 0) return;
  const distinct = [...new Set(toFold.map((item) => item.value))];
  const { rows } = await tx.query<unknown[]>({
    text: `SELECT left(f.folded, $2), CASE WHEN length(f.folded) > $2 THEN f.folded END
             FROM unnest($1::text[]) WITH ORDINALITY AS u(value, n)
            CROSS JOIN LATERAL (SELECT lower(u.value) AS folded) AS f
            ORDER BY u.n`,
    values: [distinct, VALUE_KEY_LENGTH],
    rowMode: "array",
  });
  const folded = new Map(distinct.map((value, i) => [value, rows[i]!]));
  for (const { row, value } of toFold) {
    const [key, whole] = folded.get(value)!;
    row[4] = key as string;
    row[5] = whole as string | null;
  }
}

/**
 * The run's events whose data is large as stored (`LARGE_DATA_BYTES`), made into rows of
 * `entries` inside PostgreSQL: only what needs our code (the normalised DN, the times read
 * from the operational attributes) is read here, from a few fields of each event rather than
 * the whole snapshot. Returns their entries, whose values `insertEntryValues` indexes.
 */
async function insertLargeSnapshots(
  run: FirstSnapshots,
  { tx, table }: ProjectionContext,
): Promise<string[]> {
  const params: unknown[] = [];
  const from = run.from(params);
  params.push(LARGE_DATA_BYTES);
  const { rows } = await tx.query<{
    position: string;
    entry_uuid: string;
    dn: string;
    created: string | null;
    modified: string | null;
    occurred_at: Date;
  }>(
    `SELECT e.position, e.data->>'entryUUID' AS entry_uuid, e.data->'state'->>'dn' AS dn,
            e.data->'state'->'operational'->'createTimestamp'->>0 AS created,
            e.data->'state'->'operational'->'modifyTimestamp'->>0 AS modified, e.occurred_at
       FROM ${from} AND pg_column_size(e.data) > $${params.length}`,
    params,
  );
  if (rows.length === 0) return [];
  // As `apply`: created at the entry's createTimestamp, modified at its modifyTimestamp (the
  // last event is a snapshot), each the event's occurred_at when the entry has none.
  await tx.query(
    `INSERT INTO ${table("entries")}
       (entry_uuid, type, dn, dn_norm, attributes, operational, created_at, modified_at, version,
        created_position, position, transaction_id)
     SELECT (e.data->>'entryUUID')::uuid, e.data->'state'->>'type', e.data->'state'->>'dn',
            r.dn_norm, e.data->'state'->'attributes', e.data->'state'->'operational',
            r.created_at, r.modified_at, e.stream_version, e.position, e.position,
            e.transaction_id
       FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::timestamptz[])
            AS r(position, dn_norm, created_at, modified_at)
       JOIN events AS e ON e.position = r.position`,
    [
      rows.map((row) => row.position),
      rows.map((row) => normalizeDN(row.dn)),
      rows.map((row) => generalizedTime(row.created) ?? row.occurred_at),
      rows.map((row) => generalizedTime(row.modified) ?? row.occurred_at),
    ],
  );
  return rows.map((row) => row.entry_uuid);
}

async function isEmpty(tx: ProjectionContext["tx"], table: string): Promise<boolean> {
  return (await tx.query(`SELECT 1 FROM ${table} LIMIT 1`)).rowCount === 0;
}

async function hasPrimaryKey(tx: ProjectionContext["tx"], table: string): Promise<boolean> {
  const result = await tx.query(
    "SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass($1) AND contype = 'p'",
    [table],
  );
  return (result.rowCount ?? 0) > 0;
}
