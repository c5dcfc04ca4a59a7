import t from "tap";
import { compileFilterToSql, parseFilter, type FilterNode } from "../../src/filters/index.ts";
import type { Pool } from "../../src/db/index.ts";
import { countMatchedDuring, versionsAt, versionTypes } from "../../src/history/index.ts";
import type { FieldSelection } from "../../src/rest/fields.ts";
import { countSearch, searchPage } from "../../src/rest/search/page.ts";
import { SearchSql } from "../../src/rest/search/sql.ts";
import { EventStore } from "../../src/store/index.ts";
import {
  ENTRY_VERSION_VALUES,
  ENTRY_VERSIONS,
  VALUE_SPAN_COLUMNS,
  valueSpanRows,
} from "../../projections/entry-versions/index.ts";
import { VALUE_KEY_LENGTH } from "../../projections/entries/index.ts";
import { EntryHistory } from "../support/entries.ts";
import { testDatabase } from "../support/postgres.ts";

t.setTimeout(300_000);

const PEOPLE = "ou=people,dc=example,dc=org";
const ALL: FieldSelection = {
  allUser: true,
  allOperational: false,
  names: [],
  wildcard: false,
  explicit: false,
};
const day = (n: number) => new Date(Date.UTC(2026, 10, n, 9));
const LONG = "Lorem ipsum dolor sit amet ".repeat(9); // beyond a value's key

/** The uuids of the versions valid at `at` that match, by the JSON comparison (the reference). */
async function referenceAt(pool: Pool, filter: FilterNode, at: Date): Promise<string[]> {
  const params: unknown[] = ["user", at];
  const where = compileFilterToSql(filter, { attributesColumn: "v.merged", params });
  const result = await pool.query<{ entry_uuid: string }>(
    `SELECT v.entry_uuid FROM (SELECT *, attributes || operational AS merged FROM ${ENTRY_VERSIONS}) AS v
      WHERE v.type = $1 AND NOT v.deleted AND v.valid_from <= $2
        AND coalesce(v.valid_to, 'infinity') > $2 AND ${where} ORDER BY v.entry_uuid`,
    params,
  );
  return result.rows.map((row) => row.entry_uuid);
}

/**
 * The uuids of every entry (of any type) that matched at `at`, as GraphQL's `@at` reads them:
 * `versionsAt` over every type the spans hold (read by the statement itself), the same over
 * the types read before it (`versionTypes`), and the same by the JSON comparison.
 */
async function everyTypeAt(
  pool: Pool,
  filter: FilterNode,
  at: Date,
): Promise<[string[], string[], string[]]> {
  const params: unknown[] = [at];
  const relation = versionsAt({ at: "$1", filter, params });
  const spans = await pool.query<{ entry_uuid: string }>(
    `SELECT e.entry_uuid FROM ${relation} ORDER BY e.entry_uuid`,
    params,
  );
  const listedParams: unknown[] = [at, await versionTypes(pool)];
  const listed = await pool.query<{ entry_uuid: string }>(
    `SELECT e.entry_uuid FROM ${versionsAt({ at: "$1", filter, types: "$2", params: listedParams })}
      ORDER BY e.entry_uuid`,
    listedParams,
  );
  const jsonParams: unknown[] = [at];
  const where = compileFilterToSql(filter, { attributesColumn: "v.merged", params: jsonParams });
  const json = await pool.query<{ entry_uuid: string }>(
    `SELECT v.entry_uuid FROM (SELECT *, attributes || operational AS merged FROM ${ENTRY_VERSIONS}) AS v
      WHERE NOT v.deleted AND v.valid_from <= $1
        AND coalesce(v.valid_to, 'infinity') > $1 AND ${where} ORDER BY v.entry_uuid`,
    jsonParams,
  );
  return [
    spans.rows.map((r) => r.entry_uuid),
    listed.rows.map((r) => r.entry_uuid),
    json.rows.map((r) => r.entry_uuid),
  ];
}

/** How many entries matched at some moment of `[start, end)`, by the JSON comparison. */
async function referenceDuring(
  pool: Pool,
  filter: FilterNode,
  start: Date,
  end: Date,
): Promise<number> {
  const params: unknown[] = ["user", start, end];
  const where = compileFilterToSql(filter, { attributesColumn: "v.merged", params });
  const result = await pool.query<{ count: number }>(
    `SELECT count(DISTINCT v.entry_uuid)::int AS count
       FROM (SELECT *, attributes || operational AS merged FROM ${ENTRY_VERSIONS}) AS v
      WHERE v.type = $1 AND NOT v.deleted AND v.valid_from < coalesce(v.valid_to, 'infinity')
        AND v.valid_from < $3 AND coalesce(v.valid_to, 'infinity') > $2 AND ${where}`,
    params,
  );
  return result.rows[0]?.count ?? 0;
}

const FILTERS = [
  "(sn=müller)",
  "(sn=MÜLLER)",
  "(sn=*)",
  "(!(sn=*))",
  "(!(sn=smith))",
  "(title=engineer)",
  "(title=eng*)",
  "(title=*ana*)",
  "(&(objectClass=inetOrgPerson)(title=engineer))",
  "(&(title=engineer)(!(sn=smith)))",
  "(&(uid=u1)(|(sn=müller)(sn=smith))(!(title=manager)))",
  "(|(uid=u1)(uid=U2)(uid=u9)(uid=nobody))",
  "(|(uid=u1)(!(title=*)))",
  "(!(&(sn=müller)(title=engineer)))",
  "(uidNumber>=1005)",
  `description = "${LONG}tail"`,
  `description co "${LONG.slice(30)}TAIL"`,
  "(&)",
  "(|)",
];

t.test(
  "filters at a moment and over a period select what the JSON comparison selects",
  async (t) => {
    const db = await testDatabase(t);
    const store = await EventStore.open(db.pool);
    const history = await EntryHistory.start(t, db.pool, store);
    const uuids: string[] = [];
    for (let i = 0; i < 12; i++) {
      uuids.push(
        await history.add(
          {
            dn: `uid=u${i},${PEOPLE}`,
            type: i === 11 ? "group" : "user",
            attributes: {
              objectClass: ["person", ...(i % 2 ? ["inetOrgPerson"] : [])],
              uid: [`u${i}`],
              sn: [["Müller", "Smith", "Meyer"][i % 3]!],
              title: [["Engineer", "Manager", "Analyst"][i % 3]!],
              uidNumber: [String(1000 + i)],
              ...(i % 4 === 0 ? { description: [`${LONG}Tail`] } : {}),
            },
          },
          { at: day(1) },
        ),
      );
    }
    // Every kind of change, some twice, two at one instant (a version valid at no moment).
    await history.modify(uuids[0]!, { title: ["Manager"], sn: [] }, { at: day(5) });
    await history.modify(uuids[1]!, { sn: ["MÜLLER"] }, { at: day(6) });
    await history.modify(uuids[1]!, { title: [] }, { at: day(6) });
    await history.delete(uuids[2]!, { at: day(7) });
    await history.rename(uuids[3]!, `uid=u3b,${PEOPLE}`, { at: day(8) });
    await history.modify(uuids[4]!, { description: [`${LONG}TAIL`] }, { at: day(9) });
    await history.modify(uuids[0]!, { title: ["Engineer"], sn: ["Smith"] }, { at: day(10) });
    await history.modify(uuids[5]!, { uid: ["u1"] }, { at: day(11) });
    await history.settled();
    const moments = [day(1), day(4), day(6), day(7), day(9), day(12)];
    let nonEmpty = 0;
    for (const text of FILTERS) {
      const { ast } = parseFilter(text);
      for (const at of moments) {
        const expected = await referenceAt(db.pool, ast, at);
        nonEmpty += expected.length > 0 ? 1 : 0;
        const sql = new SearchSql({ type: "user", filter: ast, sort: [], selection: ALL, at });
        const page = await searchPage(db.pool, sql, { direction: "forward", limit: 1000 });
        const label = `${text} at ${at.toISOString()}`;
        t.same(
          page.rows.map((row) => row.entry_uuid),
          expected,
          label,
        );
        t.equal(Number(await countSearch(db.pool, sql)), expected.length, `${label}: count`);
        const [every, listed, everyExpected] = await everyTypeAt(db.pool, ast, at);
        t.same(every, everyExpected, `${label}: every type, as GraphQL's @at reads`);
        t.same(listed, everyExpected, `${label}: every type, over the types listed before`);
      }
      for (const [start, end] of [
        [day(2), day(6)],
        [day(6), day(8)],
        [day(1), day(30)],
      ] as const) {
        t.equal(
          await countMatchedDuring(db.pool, { type: "user", filter: ast, period: { start, end } }),
          await referenceDuring(db.pool, ast, start, end),
          `${text} during ${start.toISOString()}/${end.toISOString()}`,
        );
      }
    }
    t.ok(nonEmpty > FILTERS.length, "the matrix compares non-empty results");
  },
);

/** Every index named in a JSON plan, and every table read by a sequential scan. */
function scans(plan: unknown): { indexes: string[]; sequential: string[] } {
  const indexes: string[] = [];
  const sequential: string[] = [];
  const visit = (node: Record<string, unknown>) => {
    if (typeof node["Index Name"] === "string") indexes.push(node["Index Name"]);
    if (node["Node Type"] === "Seq Scan") sequential.push(String(node["Relation Name"]));
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) visit(child);
  };
  visit(plan as Record<string, unknown>);
  return { indexes, sequential };
}

t.test("a search at a moment reads the versions' value index", async (t) => {
  const db = await testDatabase(t);
  const store = await EventStore.open(db.pool);
  await EntryHistory.start(t, db.pool, store); // creates the projection's tables
  // 5,000 people with four versions each over a year: the title changes every quarter.
  await db.pool.query(
    `INSERT INTO ${ENTRY_VERSIONS}
       (entry_uuid, version, valid_from, valid_to, deleted, type, dn, attributes, operational, position, created_position)
     SELECT u.uuid, q, $1::timestamptz + (q - 1) * interval '91 days',
            CASE WHEN q < 4 THEN $1::timestamptz + q * interval '91 days' END, false, 'user',
            'uid=w' || u.g || ',${PEOPLE}',
            jsonb_build_object('uid', jsonb_build_array('w' || g),
                               'sn', jsonb_build_array('Sn' || (g % 50)),
                               'title', jsonb_build_array((ARRAY['Engineer','Manager','Analyst'])[1 + (g + q) % 3])),
            '{}', g * 4 + q, g * 4 + 1
       FROM (SELECT g, gen_random_uuid() AS uuid FROM generate_series(1, 5000) AS g) AS u
      CROSS JOIN generate_series(1, 4) AS q`,
    [new Date(Date.UTC(2025, 10, 1))],
  );
  await db.pool.query(
    `INSERT INTO ${ENTRY_VERSION_VALUES}
       (${VALUE_SPAN_COLUMNS})
     SELECT ${VALUE_SPAN_COLUMNS} FROM (${valueSpanRows(ENTRY_VERSIONS, "$1")}) AS s`,
    [VALUE_KEY_LENGTH],
  );
  await db.pool.query(`ANALYZE ${ENTRY_VERSIONS}, ${ENTRY_VERSION_VALUES}`);

  const plan = async (filter: string, at: Date) => {
    const sql = new SearchSql({
      type: "user",
      filter: parseFilter(filter).ast,
      sort: [],
      selection: ALL,
      at,
    });
    const params = [...sql.params, 51];
    const result = await db.pool.query<{ "QUERY PLAN": [{ Plan: unknown }] }>(
      `EXPLAIN (FORMAT JSON) SELECT * FROM (${sql.inner}) AS q
        ORDER BY ${sql.orderBy("forward")} LIMIT $${params.length}`,
      params,
    );
    return scans(result.rows[0]!["QUERY PLAN"][0].Plan);
  };
  const recent = new Date(Date.UTC(2026, 9, 1));
  const old = new Date(Date.UTC(2025, 11, 1));
  for (const at of [recent, old]) {
    const when = at.toISOString();
    const equality = await plan("uid = W123", at);
    t.ok(
      equality.indexes.includes("entry_version_values_match"),
      `equality at ${when}: ${JSON.stringify(equality)}`,
    );
    t.same(equality.sequential, [], `equality at ${when}: no sequential scan`);
    const both = await plan("(&(sn=Sn7)(uid=w107))", at);
    t.ok(
      both.indexes.includes("entry_version_values_match"),
      `and at ${when}: ${JSON.stringify(both)}`,
    );
    t.same(both.sequential, [], `and at ${when}: no sequential scan`);
    const prefix = await plan('uid sw "w12"', at);
    t.ok(
      prefix.indexes.includes("entry_version_values_match"),
      `prefix at ${when}: ${JSON.stringify(prefix)}`,
    );
    t.same(prefix.sequential, [], `prefix at ${when}: no sequential scan`);
  }
});
