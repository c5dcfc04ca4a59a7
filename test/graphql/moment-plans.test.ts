import t from "tap";
import type { Pool } from "../../src/db/index.ts";
import type { DirectoryClient } from "../../src/directory/index.ts";
import { NameSet } from "../../src/events/index.ts";
import { parseFilter } from "../../src/filters/index.ts";
import { momentDirectory } from "../../src/graphql/gateway/moment-reads.ts";
import { EventStore } from "../../src/store/index.ts";
import { VALUE_KEY_LENGTH } from "../../projections/entries/index.ts";
import {
  ENTRY_VERSION_VALUES,
  ENTRY_VERSIONS,
  VALUE_SPAN_COLUMNS,
  valueSpanRows,
} from "../../projections/entry-versions/index.ts";
import { EntryHistory } from "../support/entries.ts";
import {
  analysedSearches,
  notingPool,
  rowsHandled,
  type NotedStatement,
  type PlanNode,
} from "../support/plans.ts";
import { testDatabase } from "../support/postgres.ts";
import { TEST_SCHEMA } from "../rest/fixtures/harness.ts";

t.setTimeout(300_000);

const BASE = "dc=example,dc=org";
const PEOPLE = `ou=people,${BASE}`;
const GROUPS = `ou=groups,${BASE}`;
const PEOPLE_COUNT = 5000;
const START = new Date(Date.UTC(2025, 10, 1));
/** Three quarters after `START`: each person's third version (of four) is valid then. */
const MOMENT = new Date(Date.UTC(2026, 6, 1));

/**
 * The history of a directory of `PEOPLE_COUNT` people over a year, written straight into
 * `entry_versions` and its value spans: the containers (untyped), each person in four versions
 * (the title changes every quarter), every tenth one deleted in the second quarter, and three
 * groups of thousands of members whose member lists change every quarter.
 */
async function seedHistory(pool: Pool): Promise<void> {
  const quarter = (q: string) => `$1::timestamptz + (${q} - 1) * interval '91 days'`;
  await pool.query(
    `INSERT INTO ${ENTRY_VERSIONS}
       (entry_uuid, version, valid_from, valid_to, deleted, type, dn, attributes, operational, position, created_position)
     SELECT gen_random_uuid(), 1, $1::timestamptz, NULL, false, NULL, c.dn, c.attributes, '{}', c.n, c.n
       FROM (VALUES (1, '${BASE}', '{"objectClass": ["domain"]}'::jsonb),
                    (2, '${PEOPLE}', '{"objectClass": ["organizationalUnit"], "ou": ["people"]}'),
                    (3, '${GROUPS}', '{"objectClass": ["organizationalUnit"], "ou": ["groups"]}'))
            AS c(n, dn, attributes)`,
    [START],
  );
  await pool.query(
    `INSERT INTO ${ENTRY_VERSIONS}
       (entry_uuid, version, valid_from, valid_to, deleted, type, dn, attributes, operational, position, created_position)
     SELECT u.uuid, q, ${quarter("q")}, CASE WHEN q < 4 THEN ${quarter("q + 1")} END,
            q > 2 AND u.g % 10 = 0, 'user', 'uid=w' || u.g || ',${PEOPLE}',
            CASE WHEN q > 2 AND u.g % 10 = 0 THEN '{}'::jsonb
                 ELSE jsonb_build_object('objectClass', jsonb_build_array('inetOrgPerson'),
                        'uid', jsonb_build_array('w' || u.g), 'sn', jsonb_build_array('Sn' || u.g),
                        'title', jsonb_build_array((ARRAY['Engineer','Manager','Analyst'])[1 + (u.g + q) % 3])) END,
            '{}', 10 + u.g * 4 + q, 10 + u.g * 4 + 1
       FROM (SELECT g, gen_random_uuid() AS uuid FROM generate_series(1, $2::int) AS g) AS u
      CROSS JOIN generate_series(1, 4) AS q`,
    [START, PEOPLE_COUNT],
  );
  await pool.query(
    `INSERT INTO ${ENTRY_VERSIONS}
       (entry_uuid, version, valid_from, valid_to, deleted, type, dn, attributes, operational, position, created_position)
     SELECT u.uuid, q, ${quarter("q")}, CASE WHEN q < 4 THEN ${quarter("q + 1")} END,
            false, 'group', 'cn=g' || u.k || ',${GROUPS}',
            jsonb_build_object('objectClass', jsonb_build_array('groupOfNames'),
              'cn', jsonb_build_array('g' || u.k),
              -- Values that compress little: the versions' attributes are large as stored.
              'description', (SELECT jsonb_agg(md5(u.k || ':' || d))
                                FROM generate_series(1, 2500) AS d),
              'member', (SELECT jsonb_agg('uid=w' || m || ',${PEOPLE}' ORDER BY m)
                           FROM generate_series(1, $2::int) AS m WHERE (m + q) % u.k = 0)),
            '{}', 10 + $2::int * 4 + u.k * 4 + q, 10 + $2::int * 4 + u.k * 4 + 1
       FROM (SELECT k, gen_random_uuid() AS uuid FROM generate_series(1, 3) AS k) AS u
      CROSS JOIN generate_series(1, 4) AS q`,
    [START, PEOPLE_COUNT],
  );
  await pool.query(
    `INSERT INTO ${ENTRY_VERSION_VALUES} (${VALUE_SPAN_COLUMNS})
     SELECT ${VALUE_SPAN_COLUMNS}
       FROM (${valueSpanRows(`(SELECT * FROM ${ENTRY_VERSIONS} ORDER BY entry_uuid, version)`, "$1")}) AS s`,
    [VALUE_KEY_LENGTH],
  );
  await pool.query(`ANALYZE ${ENTRY_VERSIONS}, ${ENTRY_VERSION_VALUES}`);
}

t.test("a page of people at a moment stops with the page", async (t) => {
  const db = await testDatabase(t);
  const store = await EventStore.open(db.pool);
  await EntryHistory.start(t, db.pool, store); // creates the projections' tables
  await seedHistory(db.pool);

  const statements: NotedStatement[] = [];
  const then = momentDirectory(
    {} as DirectoryClient,
    {
      db: notingPool(db.pool, statements),
      base: BASE,
      schema: TEST_SCHEMA,
      redacted: new NameSet(["userPassword"]),
    },
    MOMENT,
  );
  const analysed = analysedSearches(db.pool, then, statements);

  // The people page: 101 of the 4,500 people there then, in creation order, each in its
  // version valid then (the third). Reading every version valid then and sorting them before
  // the limit handled all 4,500; walking the versions in creation order stops after the page.
  const page = await analysed(PEOPLE, {
    scope: "sub",
    filter: parseFilter("(objectClass=inetOrgPerson)").ast,
    attributes: ["uid", "title"],
    sizeLimit: 101,
    pageSize: 101,
  });
  const expected = Array.from({ length: 112 }, (_, i) => i + 1).filter((g) => g % 10 !== 0);
  t.same(
    page.entries.map((entry) => entry.dn),
    expected.slice(0, 101).map((g) => `uid=w${g},${PEOPLE}`),
    "the first 101 people there then, in creation order, the deleted ones left out",
  );
  t.same(
    page.entries[0]!.attributes,
    { uid: ["w1"], title: ["Manager"] },
    "each in its version valid then",
  );
  const busiest = Math.max(...page.plan.map(rowsHandled));
  t.ok(
    busiest < 1000,
    `no step of the plan handles every version valid then (at most ${busiest} rows)`,
  );

  // The groups of two people then (the third quarter's members), with only their matched
  // members.
  const wanted = [`uid=w6,${PEOPLE}`, `uid=W7,${PEOPLE.toUpperCase()}`];
  const matches = wanted.map((value) => ({ op: "eq" as const, attribute: "member", value }));
  const groups = await analysed(GROUPS, {
    scope: "sub",
    filter: { op: "or", filters: matches },
    attributes: ["cn", "member"],
    matchedValues: [...matches, { op: "present", attribute: "cn" }],
    pageSize: 500,
  });
  t.same(
    groups.entries,
    [
      {
        dn: `cn=g1,${GROUPS}`,
        attributes: { cn: ["g1"], member: [`uid=w6,${PEOPLE}`, `uid=w7,${PEOPLE}`] },
      },
      { dn: `cn=g2,${GROUPS}`, attributes: { cn: ["g2"], member: [`uid=w7,${PEOPLE}`] } },
      { dn: `cn=g3,${GROUPS}`, attributes: { cn: ["g3"], member: [`uid=w6,${PEOPLE}`] } },
    ],
    "each group with the members asked about then",
  );

  // The groups of a page of people, as the gateway batches them: the values held then are
  // found in the value spans and, spelled as the lists hold them, taken as they are, not found
  // by folding each of the 5,000, 2,500 and 1,666 members of the three groups. (`W7` above
  // is spelled otherwise than the lists hold it: those lists are folded.)
  const hundred = Array.from({ length: 100 }, (_, i) => ({
    op: "eq" as const,
    attribute: "member",
    value: `uid=w${i + 1},${PEOPLE}`,
  }));
  const batched = await analysed(GROUPS, {
    scope: "sub",
    filter: {
      op: "and",
      filters: [parseFilter("(objectClass=groupOfNames)").ast, { op: "or", filters: hundred }],
    },
    attributes: ["cn", "member"],
    matchedValues: [...hundred, { op: "present", attribute: "cn" }],
    pageSize: 500,
  });
  t.same(
    batched.entries.map((entry) => entry.attributes.member?.length),
    [100, 50, 33],
    "the groups of the hundred, each with its members among them",
  );
  const unfolded = batched.plan
    .filter((node) => node["Function Name"] === "jsonb_array_elements_text")
    .reduce((sum, node) => sum + rowsHandled(node), 0);
  t.ok(unfolded < 100, `the members are not unfolded one by one (${unfolded} values)`);

  // Matched values as asked (the loaders' lookups): the items that matched then, and what was
  // read of a version whose stored attributes are large is kept, not read again.
  const asAsked = {
    scope: "sub" as const,
    filter: { op: "or" as const, filters: matches },
    attributes: ["cn", "member"],
    matchedValues: [...matches, { op: "present" as const, attribute: "cn" }],
    matchedValuesAsAsked: true,
    pageSize: 500,
  };
  const blocks = async () => {
    const last = statements.at(-1)!;
    const explained = await db.pool.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${last.sql}`,
      last.params,
    );
    const root = explained.rows[0]!["QUERY PLAN"][0].Plan;
    return Number(root["Shared Hit Blocks"]) + Number(root["Shared Read Blocks"]);
  };
  const first = await analysed(GROUPS, asAsked);
  const firstBlocks = await blocks();
  t.same(
    first.entries,
    [
      { dn: `cn=g1,${GROUPS}`, attributes: { cn: ["g1"], member: wanted } },
      { dn: `cn=g2,${GROUPS}`, attributes: { cn: ["g2"], member: [wanted[1]] } },
      { dn: `cn=g3,${GROUPS}`, attributes: { cn: ["g3"], member: [wanted[0]] } },
    ],
    "as asked: each group with the items that matched then",
  );
  const again = await analysed(GROUPS, asAsked);
  const againBlocks = await blocks();
  t.same(again.entries, first.entries, "again: the same entries and values");
  t.ok(
    againBlocks < firstBlocks,
    `again: the large versions' stored attributes are not read (${againBlocks} pages, ${firstBlocks} the first time)`,
  );
});
