import t from "tap";
import type { DirectoryClient, DirectoryEntry, SearchOptions } from "../../src/directory/index.ts";
import { NameSet } from "../../src/events/index.ts";
import { parseFilter } from "../../src/filters/index.ts";
import { projectionDirectory } from "../../src/graphql/gateway/projection-reads.ts";
import { schemaNames, tableIn } from "../../src/projector/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { ENTRIES, indexEntryValues } from "../../projections/entries/index.ts";
import { EntryHistory } from "../support/entries.ts";
import {
  analysedSearches,
  notingPool,
  planNodes,
  type PlanNode,
  rowsHandled,
  type NotedStatement,
} from "../support/plans.ts";
import { testDatabase } from "../support/postgres.ts";
import { TEST_SCHEMA } from "../rest/fixtures/harness.ts";

t.setTimeout(300_000);

const BASE = "dc=example,dc=org";
const PEOPLE = `ou=people,${BASE}`;

/** Every index named in a JSON plan, and every table read by a sequential scan. */
function scans(plan: unknown): { indexes: string[]; sequential: string[] } {
  const indexes: string[] = [];
  const sequential: string[] = [];
  const visit = (node: Record<string, unknown>) => {
    if (typeof node["Index Name"] === "string") indexes.push(node["Index Name"]);
    // The counts of values hold a row per type and attribute: the statement reads the types
    // it spans there, all of them.
    if (node["Node Type"] === "Seq Scan" && node["Relation Name"] !== "entry_value_counts") {
      sequential.push(String(node["Relation Name"]));
    }
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) visit(child);
  };
  visit(plan as Record<string, unknown>);
  return { indexes, sequential };
}

t.test("gateway searches read the value index and the index of parents", async (t) => {
  const db = await testDatabase(t);
  const store = await EventStore.open(db.pool);
  await EntryHistory.start(t, db.pool, store); // creates the projection's tables
  const row = (uuid: string, type: string | null, dn: string, attributes: string, n: string) =>
    `SELECT ${uuid}, ${type}, ${dn}, ${dn}, ${attributes}, '{}'::jsonb, now(), now(), 1, ${n}, ${n}, '1'::xid8`;
  const uuids = (
    await db.pool.query<{ entry_uuid: string }>(
      `INSERT INTO ${ENTRIES}
         (entry_uuid, type, dn, dn_norm, attributes, operational, created_at, modified_at, version, created_position, position, transaction_id)
       ${row("gen_random_uuid()", "NULL::text", `'${BASE}'`, `'{"objectClass": ["domain"]}'::jsonb`, "0")}
       UNION ALL
       ${row("gen_random_uuid()", "NULL::text", `'${PEOPLE}'`, `'{"objectClass": ["organizationalUnit"], "ou": ["people"]}'::jsonb`, "1")}
       UNION ALL
       ${row(
         "gen_random_uuid()",
         "'user'",
         `'uid=w' || g || ',${PEOPLE}'`,
         `jsonb_build_object('objectClass', jsonb_build_array('inetOrgPerson'),
            'uid', jsonb_build_array('w' || g), 'sn', jsonb_build_array('Sn' || (g % 50)),
            'title', jsonb_build_array((ARRAY['Engineer','Manager','Analyst'])[1 + g % 3]))`,
         "g + 1",
       )} FROM generate_series(1, 5000) AS g
       RETURNING entry_uuid`,
    )
  ).rows.map((r) => r.entry_uuid);
  await indexEntryValues(db.pool, tableIn(schemaNames("entries").live), uuids);
  await db.pool.query("ANALYZE projection_entries.entries, projection_entries.entry_values");

  const statements: NotedStatement[] = [];
  const directory = new Proxy({} as DirectoryClient, {
    get(_, property) {
      throw new Error(`the directory was asked: ${String(property)}`);
    },
  });
  const reads = projectionDirectory(directory, {
    db: notingPool(db.pool, statements),
    base: BASE,
    schema: TEST_SCHEMA,
    redacted: new NameSet(["userPassword"]),
  });
  const search = async (dn: string, filter: string, scope: "sub" | "one") => {
    statements.length = 0;
    const entries: DirectoryEntry[] = [];
    for await (const page of reads.search(dn, {
      filter: parseFilter(filter).ast,
      scope,
      attributes: ["uid", "ou", "hasSubordinates"],
    })) {
      entries.push(...page);
    }
    const last = statements.at(-1)!;
    const explained = await db.pool.query<{ "QUERY PLAN": [{ Plan: unknown }] }>(
      `EXPLAIN (FORMAT JSON) ${last.sql}`,
      last.params,
    );
    return { entries, plan: scans(explained.rows[0]!["QUERY PLAN"][0].Plan) };
  };

  const equality = await search(BASE, "(uid=W123)", "sub");
  t.same(
    equality.entries,
    [
      {
        dn: `uid=w123,${PEOPLE}`,
        attributes: { uid: ["w123"], hasSubordinates: ["FALSE"] },
      },
    ],
    "the entry, without children",
  );
  t.ok(equality.plan.indexes.includes("entry_values_match"), JSON.stringify(equality.plan));
  t.ok(equality.plan.indexes.includes("entries_parent"), JSON.stringify(equality.plan));
  t.same(equality.plan.sequential, [], "equality: no sequential scan");

  const both = await search(BASE, "(&(sn=Sn7)(title=engineer))", "sub");
  t.equal(both.entries.length, 33, "the conjunction's matches");
  t.ok(both.plan.indexes.includes("entry_values_match"), JSON.stringify(both.plan));
  // At this size the planner may hash the few matches against a scan of the entries.
  t.notOk(both.plan.sequential.includes("entry_values"), "and: the values are not scanned");

  // The groups of a page of people, batched: a hundred equalities, probes of the index.
  const hundred = Array.from({ length: 100 }, (_, i) => `(uid=w${i + 1})`).join("");
  const batched = await search(BASE, `(&(objectClass=inetOrgPerson)(|${hundred}))`, "sub");
  t.equal(batched.entries.length, 100, "the batch's matches");
  t.ok(batched.plan.indexes.includes("entry_values_match"), JSON.stringify(batched.plan));
  // At this size the planner may hash the matches against a scan of the entries.
  t.notOk(batched.plan.sequential.includes("entry_values"), "or: the values are not scanned");
  t.ok(statements.at(-1)!.params.length < 20, "the hundred values in one parameter");

  const level = await search(BASE, "(objectClass=*)", "one");
  t.same(
    level.entries,
    [{ dn: PEOPLE, attributes: { ou: ["people"], hasSubordinates: ["TRUE"] } }],
    "one level below the base: the container, with children",
  );
  t.ok(level.plan.indexes.includes("entries_parent"), JSON.stringify(level.plan));
  t.same(level.plan.sequential, [], "one level: no sequential scan");
});

t.test("a page of a search most entries match stops with the page", async (t) => {
  const db = await testDatabase(t);
  const store = await EventStore.open(db.pool);
  await EntryHistory.start(t, db.pool, store); // creates the projection's tables
  const GROUPS = `ou=groups,${BASE}`;
  const PEOPLE_COUNT = 5000;
  const row = (type: string, dn: string, attributes: string, n: string) =>
    `SELECT gen_random_uuid(), ${type}, ${dn}, ${dn}, ${attributes}, '{}'::jsonb, now(), now(), 1, ${n}, ${n}, '1'::xid8`;
  const uuids = (
    await db.pool.query<{ entry_uuid: string }>(
      `INSERT INTO ${ENTRIES}
         (entry_uuid, type, dn, dn_norm, attributes, operational, created_at, modified_at, version, created_position, position, transaction_id)
       ${row("NULL::text", `'${PEOPLE}'`, `'{"objectClass": ["organizationalUnit"], "ou": ["people"]}'::jsonb`, "1")}
       UNION ALL
       ${row(
         "'user'",
         `'uid=w' || g || ',${PEOPLE}'`,
         `jsonb_build_object('objectClass', jsonb_build_array('inetOrgPerson'),
            'uid', jsonb_build_array('w' || g), 'sn', jsonb_build_array('Sn' || g))`,
         "g + 1",
       )} FROM generate_series(1, ${PEOPLE_COUNT}) AS g
       UNION ALL
       ${row(
         "'group'",
         `'cn=g' || k || ',${GROUPS}'`,
         `jsonb_build_object('objectClass', jsonb_build_array('groupOfNames'),
            'cn', jsonb_build_array('g' || k),
            -- Text that compresses little: the attributes are stored out of line.
            'description', jsonb_build_array(
              (SELECT string_agg(md5(k || ':' || d), '') FROM generate_series(1, 3000) AS d)),
            'member', (SELECT jsonb_agg('uid=w' || m || ',${PEOPLE}')
                         FROM generate_series(1, ${PEOPLE_COUNT}) AS m WHERE m % k = 0))`,
         `${PEOPLE_COUNT} + 10 + k`,
       )} FROM generate_series(1, 3) AS k
       RETURNING entry_uuid`,
    )
  ).rows.map((r) => r.entry_uuid);
  await indexEntryValues(db.pool, tableIn(schemaNames("entries").live), uuids);
  await db.pool.query("ANALYZE projection_entries.entries, projection_entries.entry_values");

  const statements: NotedStatement[] = [];
  const reads = projectionDirectory({} as DirectoryClient, {
    db: notingPool(db.pool, statements),
    base: BASE,
    schema: TEST_SCHEMA,
    redacted: new NameSet(["userPassword"]),
  });
  const analysed = analysedSearches(db.pool, reads, statements);

  // The people page: 101 of 5,000 matches, in creation order. Sorting every match before the
  // limit read all 5,000; walking the index of creation order stops after the page.
  const page = await analysed(PEOPLE, {
    scope: "sub",
    filter: parseFilter("(objectClass=inetOrgPerson)").ast,
    attributes: ["uid", "sn"],
    sizeLimit: 101,
    pageSize: 101,
  });
  t.same(
    page.entries.map((entry) => entry.dn),
    Array.from({ length: 101 }, (_, i) => `uid=w${i + 1},${PEOPLE}`),
    "the first 101 people, in creation order",
  );
  t.same(page.entries[0]!.attributes, { uid: ["w1"], sn: ["Sn1"] }, "the named attributes");
  const busiest = Math.max(...page.plan.map(rowsHandled));
  t.ok(busiest < 1000, `no step of the plan handles every match (at most ${busiest} rows)`);
  t.notOk(
    page.plan.some(
      (node) =>
        node["Node Type"] === "Sort" && planNodes(node).some((below) => rowsHandled(below) >= 1000),
    ),
    "no sort over all matches",
  );

  // The groups of two people, with only their matched members: found in the value index,
  // not by folding each of the 5,000, 2,500 and 1,666 members of the three groups.
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
      { dn: `cn=g2,${GROUPS}`, attributes: { cn: ["g2"], member: [`uid=w6,${PEOPLE}`] } },
      { dn: `cn=g3,${GROUPS}`, attributes: { cn: ["g3"], member: [`uid=w6,${PEOPLE}`] } },
    ],
    "each group with the members asked about",
  );
  const unfolded = groups.plan
    .filter((node) => node["Function Name"] === "jsonb_array_elements_text")
    .reduce((sum, node) => sum + rowsHandled(node), 0);
  t.ok(unfolded < 100, `the members are not unfolded one by one (${unfolded} values)`);

  // A group's attributes are stored compressed, out of line (its member list), and each
  // attribute read from them alone would read and decompress them all again: the pages a
  // search reads do not grow with the attributes it asks for.
  const toast = await db.pool.query<{ blocks: number }>(
    `SELECT pg_relation_size(reltoastrelid)::int / current_setting('block_size')::int AS blocks
       FROM pg_class WHERE oid = $1::regclass`,
    [ENTRIES],
  );
  const toastBlocks = toast.rows[0]!.blocks;
  t.ok(toastBlocks > 20, `the groups' attributes are stored out of line (${toastBlocks} pages)`);
  /** A search of the groups, with the pages its statement reads (run again, analysed). */
  const read = async (options: SearchOptions) => {
    statements.length = 0;
    const entries: DirectoryEntry[] = [];
    for await (const page of reads.search(GROUPS, options)) entries.push(...page);
    const last = statements.at(-1)!;
    const explained = await db.pool.query<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${last.sql}`,
      last.params,
    );
    const root = explained.rows[0]!["QUERY PLAN"][0].Plan;
    return {
      entries,
      blocks: Number(root["Shared Hit Blocks"]) + Number(root["Shared Read Blocks"]),
    };
  };
  const blocksRead = async (attributes: string[]) => {
    const { entries, blocks } = await read({
      scope: "sub",
      filter: { op: "or", filters: matches },
      attributes,
      matchedValues: [
        ...matches,
        ...attributes.map((attribute) => ({ op: "present" as const, attribute })),
      ],
    });
    t.equal(entries.length, 3, `the three groups, with ${attributes.join(", ")}`);
    return blocks;
  };
  const two = await blocksRead(["cn", "member"]);
  const six = await blocksRead(["cn", "member", "objectClass", "description", "seeAlso", "o"]);
  t.ok(
    six - two < toastBlocks / 2,
    `six attributes read ${six} pages, two ${two}: the stored attributes once (${toastBlocks} pages)`,
  );

  // The matched values as asked: what the search read of rows whose stored attributes are
  // large is kept by entry and version, and a later search reads only their matched values.
  const asAsked: SearchOptions = {
    scope: "sub",
    filter: { op: "or", filters: matches },
    attributes: ["cn", "member"],
    matchedValues: [...matches, { op: "present", attribute: "cn" }],
    matchedValuesAsAsked: true,
  };
  const first = await read(asAsked);
  const expected = (g1: string) => [
    { dn: `cn=g1,${GROUPS}`, attributes: { cn: [g1], member: [wanted[0], wanted[1]] } },
    { dn: `cn=g2,${GROUPS}`, attributes: { cn: ["g2"], member: [wanted[0]] } },
    { dn: `cn=g3,${GROUPS}`, attributes: { cn: ["g3"], member: [wanted[0]] } },
  ];
  t.same(first.entries, expected("g1"), "each group with the members asked about, as asked");
  const again = await read(asAsked);
  t.same(again.entries, first.entries, "again: the same entries and values");
  t.ok(
    again.blocks < first.blocks - toastBlocks / 2,
    `again: the stored attributes are not read (${again.blocks} pages, ${first.blocks} the first time)`,
  );
  // A change is a new version: what was kept of the one before is not used.
  await db.pool.query(
    `UPDATE ${ENTRIES} SET attributes = jsonb_set(attributes, '{cn}', '["g1-renamed"]'),
            version = version + 1
      WHERE dn = $1`,
    [`cn=g1,${GROUPS}`],
  );
  const changed = await read(asAsked);
  t.same(changed.entries, expected("g1-renamed"), "after a change: the new version's values");
});
