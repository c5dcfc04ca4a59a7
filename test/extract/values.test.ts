import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pino } from "pino";
import t from "tap";
import { parseGeneralizedTime } from "../../src/capture/index.ts";
import { parseSubschema } from "../../src/directory/schema.ts";
import { extractToFolder } from "../../src/extract/index.ts";
import { EXTRACT_TABLES } from "../../src/extract/tables.ts";
import { START } from "../../src/store/index.ts";
import { Projector } from "../../src/projector/index.ts";
import { allProjections } from "../../projections/index.ts";
import { ENTRY_VERSIONS } from "../../projections/entry-versions/index.ts";
import { duckdb, literal } from "../support/duckdb.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * The extract reads its rows column by column, each in the form its kind reads (a time as
 * its milliseconds, an attribute's values from the version's JSON): every value of the
 * versions and the memberships, read back by DuckDB, is the projection's, converted as the
 * table promises (docs/analytics.md): typed attributes of a configured type, the rest and the
 * operational attributes as JSON, none where there is none. Awkward text (COPY's escapes,
 * JSON's, characters beyond the BMP), nulls, lists cut across row groups and files.
 */
t.setTimeout(300_000);

const SCHEMA = parseSubschema(
  [
    "( 2.5.4.3 NAME ( 'cn' 'commonName' ) SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )",
    "( 1.3.6.1.1.1.1.0 NAME 'uidNumber' SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
    "( 1.9.1 NAME 'luckyNumbers' SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 )",
    "( 1.9.2 NAME 'accountActive' SYNTAX 1.3.6.1.4.1.1466.115.121.1.7 SINGLE-VALUE )",
    "( 1.9.3 NAME 'hiredAt' SYNTAX 1.3.6.1.4.1.1466.115.121.1.24 SINGLE-VALUE )",
    "( 1.9.4 NAME 'seenAt' SYNTAX 1.3.6.1.4.1.1466.115.121.1.24 )",
    "( 1.9.5 NAME 'nickName' SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )",
    "( 2.5.4.31 NAME 'member' SYNTAX 1.3.6.1.4.1.1466.115.121.1.12 )",
  ],
  [],
);

const awkward = [
  "tab\there",
  "line\nbreak",
  'quote " and back\\slash \\N \\t',
  "\\N",
  "",
  "bell\u0007 \b \f \v",
  "Müller 日本 😀",
];

const { pool } = await testDatabase(t);
const projector = await Projector.start({
  pool,
  projections: allProjections,
  log: pino({ level: "silent" }),
});
await projector.stop(); // the tables exist; the rows are written here

/** 40 entries of a few versions each: users (typed), things of no configured type, groups. */
const start = Date.UTC(2026, 0, 1, 9, 0, 0, 123);
let position = 0;
for (let n = 0; n < 40; n++) {
  const kind = n % 4 === 3 ? "group" : n % 4 === 2 ? null : "user";
  const versions = 1 + (n % 3);
  for (let v = 1; v <= versions; v++) {
    const text = awkward[(n + v) % awkward.length]!;
    const attributes: Record<string, string[]> =
      kind === "group"
        ? {
            cn: [`group ${n}`],
            member: [`uid=a${v},o=x`, `uid=b${n % 2},o=x`, ...(v === 2 ? [] : [`uid=${text}`])],
          }
        : {
            cn: [text, `${n}`],
            uidNumber: [n % 5 === 0 ? "not a number" : String(1000 + n)],
            luckyNumbers: ["7", "x", String(n * 1_000_000_000_000)],
            accountActive: [v % 2 === 0 ? "TRUE" : n % 5 === 1 ? "maybe" : "FALSE"],
            hiredAt: [n % 6 === 0 ? "yesterday" : `2020010${1 + (n % 9)}123456.789Z`],
            seenAt: ["20260101000000Z", "never"],
            ...(n % 7 === 0 ? {} : { nickName: [text, "second"] }),
            ...(n % 5 === 2 ? { unknownAttribute: [text], Position: ["1", text] } : {}),
          };
    const operational = n % 3 === 0 ? {} : { entryUUID: [`uuid-${n}`], note: [text] };
    position++;
    await pool.query(
      `INSERT INTO ${ENTRY_VERSIONS}
         (entry_uuid, version, valid_from, valid_to, deleted, type, dn, attributes, operational,
          position, created_position)
       VALUES (md5($1)::uuid, $2, $3, $4, false, $5, $6, $7, $8, $9, $9)`,
      [
        `entry ${n}`,
        v,
        new Date(start + n * 86_400_000 + v * 3_600_000),
        v === versions ? null : new Date(start + n * 86_400_000 + (v + 1) * 3_600_000),
        kind,
        `cn=${text} ${n},o=x`,
        attributes,
        operational,
        position,
      ],
    );
  }
}

/** As a DuckDB row answers it: BIGINT as text, lists as arrays, JSON as its text. */
const bigint = (value: unknown) => (value === null ? null : String(value));
const moment = (text: string) => parseGeneralizedTime(text)?.getTime() ?? null;
const integer = (text: string) => (/^-?\d+$/.test(text) ? String(BigInt(text)) : null);

/** Each version as the table promises it, from the projection's rows. */
async function expectedVersions() {
  const { rows } = await pool.query<{
    entry_uuid: string;
    version: number;
    dn: string;
    type: string | null;
    valid_from: Date;
    valid_to: Date | null;
    position: string;
    attributes: Record<string, string[]>;
    operational: Record<string, string[]>;
  }>(
    `SELECT entry_uuid::text, version, dn, type, valid_from, valid_to, position, attributes,
            operational
       FROM ${ENTRY_VERSIONS} WHERE NOT deleted ORDER BY entry_uuid, version`,
  );
  return rows.map((row) => {
    const typed = row.type !== null;
    const a = row.attributes;
    const named = new Set([
      "cn",
      "uidNumber",
      "luckyNumbers",
      "accountActive",
      "hiredAt",
      "seenAt",
      "nickName",
      "member",
      "unknownAttribute",
    ]);
    const rest = Object.fromEntries(Object.entries(a).filter(([name]) => !named.has(name)));
    const scalar = <T>(values: string[] | undefined, convert: (text: string) => T) =>
      typed && values ? (values.length > 0 ? convert(values[0]!) : null) : null;
    const list = <T>(values: string[] | undefined, convert: (text: string) => T) =>
      typed && values ? values.map(convert).filter((value) => value !== null) : null;
    return {
      entry_uuid: row.entry_uuid,
      version: String(row.version),
      dn: row.dn,
      type: row.type,
      valid_from: String(row.valid_from.getTime()),
      valid_to: bigint(row.valid_to?.getTime() ?? null),
      position: String(row.position),
      cn: list(a.cn, (x) => x),
      uidNumber: scalar(a.uidNumber, integer),
      luckyNumbers: list(a.luckyNumbers, integer),
      accountActive: scalar(a.accountActive, (x) =>
        x === "TRUE" ? true : x === "FALSE" ? false : null,
      ),
      hiredAt: bigint(scalar(a.hiredAt, moment)),
      seenAt: list(a.seenAt, moment)?.map(String) ?? null,
      nickName: scalar(a.nickName, (x) => x),
      member: list(a.member, (x) => x),
      unknownAttribute: list(a.unknownAttribute, (x) => x),

      attributes_other: typed
        ? Object.keys(rest).length > 0
          ? rest
          : null
        : Object.keys(a).length > 0
          ? a
          : null,
      operational: Object.keys(row.operational).length > 0 ? row.operational : null,
    };
  });
}

const db = await duckdb(t);

for (const [batchSize, rowsPerFile] of [
  [10_000, 1_000_000],
  [7, 17],
]) {
  t.test(`versions, ${batchSize} rows a batch, ${rowsPerFile} a file`, async (t) => {
    const dir = await mkdtemp(path.join(tmpdir(), "annal-extract-values-"));
    const report = await extractToFolder(pool, {
      dir,
      schema: SCHEMA,
      batchSize,
      rowsPerFile,
      tables: ["entry_versions", "memberships"],
    });
    const glob = (table: string) =>
      `read_parquet(${literal(path.join(dir, table, "*.parquet"))}, union_by_name = true)`;
    const expected = await expectedVersions();
    t.equal(report.tables[0]?.rows, expected.length);
    const read = await db.rows(
      `SELECT entry_uuid::VARCHAR AS entry_uuid, version, dn, type,
              epoch_ms(valid_from) AS valid_from, epoch_ms(valid_to) AS valid_to, position, cn,
              uidNumber, luckyNumbers, accountActive, epoch_ms(hiredAt) AS hiredAt,
              list_transform(seenAt, x -> epoch_ms(x)) AS seenAt, nickName, member,
              unknownAttribute, attributes_other, operational
         FROM ${glob("entry_versions")} ORDER BY entry_uuid, version`,
    );
    const parsed = read.map((row) => ({
      ...row,
      attributes_other:
        row.attributes_other === null ? null : JSON.parse(row.attributes_other as string),
      operational: row.operational === null ? null : JSON.parse(row.operational as string),
    }));
    t.strictSame(parsed, expected, "every value of every version");
    t.ok(
      expected.some((v) => v.cn?.includes("Müller 日本 😀")) &&
        expected.some((v) => v.type !== null && v.attributes_other !== null) &&
        expected.some((v) => v.type === null && v.attributes_other !== null),
      "the awkward values are there",
    );

    const spans = await db.rows(
      `SELECT group_uuid::VARCHAR AS group_uuid, group_dn, member_dn,
              epoch_ms(valid_from) AS valid_from, epoch_ms(valid_to) AS valid_to,
              opening_position, closing_position
         FROM ${glob("memberships")} ORDER BY group_uuid, lower(member_dn), valid_from`,
    );
    // The table's own query, answered by pg (a time in milliseconds, a bigint as text).
    const { sql, params } = EXTRACT_TABLES.memberships.query("closed", START, START, {
      attributes: [],
    });
    const open = EXTRACT_TABLES.memberships.query("open", START, START, { attributes: [] });
    const answered = [
      ...(await pool.query(sql, params)).rows,
      ...(await pool.query(open.sql, open.params)).rows,
    ].map((row: Record<string, unknown>) => ({
      group_uuid: row.group_uuid,
      group_dn: row.group_dn,
      member_dn: row.member_dn,
      valid_from: bigint(row.valid_from),
      valid_to: bigint(row.valid_to),
      opening_position: bigint(row.opening_position),
      closing_position: bigint(row.closing_position),
    }));
    t.ok(spans.length > 20, "memberships written");
    t.ok(
      spans.some((span) => span.closing_position === null) &&
        spans.some((span) => span.closing_position !== null),
      "open and closed spans",
    );
    const key = (span: Record<string, unknown>) =>
      `${String(span.group_uuid)} ${String(span.member_dn)} ${String(span.valid_from)}`;
    const byKey = (x: Record<string, unknown>, y: Record<string, unknown>) =>
      key(x) < key(y) ? -1 : key(x) > key(y) ? 1 : 0;
    t.strictSame(
      [...spans].sort(byKey),
      answered.sort(byKey),
      "every span as the table's query answers it",
    );
  });
}
