import t, { type Test } from "tap";
import type { Pool } from "../../src/db/index.ts";
import { compileFilterToSql, parseFilter, type FilterNode } from "../../src/filters/index.ts";
import type { FieldSelection } from "../../src/rest/fields.ts";
import { countSearch, searchPage, walks, type SearchRow } from "../../src/rest/search/page.ts";
import { SearchSql, type KeysetPosition } from "../../src/rest/search/sql.ts";
import type { SortKey } from "../../src/rest/sort.ts";
import { EventStore } from "../../src/store/index.ts";
import { ENTRIES } from "../../projections/entries/index.ts";
import { EntryHistory, seedPeople } from "../support/entries.ts";
import { testDatabase } from "../support/postgres.ts";

t.setTimeout(600_000);

const PEOPLE = "ou=people,dc=example,dc=org";
const ALL: FieldSelection = {
  allUser: true,
  allOperational: false,
  names: [],
  wildcard: false,
  explicit: false,
};
const LONG = "Lorem ipsum dolor sit amet ".repeat(9); // 243 characters: beyond a value's key

/** People whose values differ in case, count, length and presence; one group; one untyped. */
function people(): { type: string | null; attributes: Record<string, string[]> }[] {
  const surnames = ["Müller", "MÜLLER", "müller", "Straße", "STRASSE", "İnci", "Smith", "smith"];
  const titles = ["Engineer", "ENGINEER", "Senior Engineer", "Manager", "50% off_\\sale"];
  const out: { type: string | null; attributes: Record<string, string[]> }[] = [];
  for (let i = 0; i < 40; i++) {
    const attributes: Record<string, string[]> = {
      objectClass: ["top", "person", i % 2 ? "inetOrgPerson" : "organizationalPerson"],
      uid: [`u${i}`],
      cn: [`Person ${i}`, `P${i % 7}`],
    };
    if (i % 9 !== 4) attributes.sn = [surnames[i % surnames.length]!];
    if (i % 3 !== 0) attributes.givenName = [["Anna", "ANNA", "Ben", "clara"][i % 4]!];
    if (i % 4 !== 1) attributes.title = [titles[i % titles.length]!];
    if (i % 5 === 0)
      attributes.mail = [`u${i}@Example.org`, `U${i}@example.ORG`, `alias${i}@x.org`];
    attributes.uidNumber = [String([9, 10, 100, 1001, 99][i % 5]! + i)];
    if (i % 6 === 0) attributes.description = [`${LONG}${i % 12 === 0 ? "Tail" : "tAIL"} ${i}`];
    if (i % 8 === 3) attributes.description = [LONG.toUpperCase()];
    out.push({ type: "user", attributes });
  }
  // A surname met by a later value than the first (the sort key): outside its range of `sn`.
  out.push({
    type: "user",
    attributes: {
      objectClass: ["person"],
      uid: ["u40"],
      cn: ["Person 40"],
      sn: ["Smith", "STRASSE"],
    },
  });
  out.push({
    type: "group",
    attributes: { objectClass: ["groupOfNames"], cn: ["Person 1"], sn: ["Müller"] },
  });
  out.push({
    type: null,
    attributes: { objectClass: ["person"], cn: ["Person 2"], sn: ["Smith"] },
  });
  return out;
}

async function setUp(t: Parameters<typeof testDatabase>[0]) {
  const db = await testDatabase(t);
  const store = await EventStore.open(db.pool);
  const history = await EntryHistory.start(t, db.pool, store);
  const uuids: string[] = [];
  for (const [i, person] of people().entries()) {
    uuids.push(await history.add({ dn: `uid=u${i},${PEOPLE}`, ...person }));
  }
  // Changes after the add: a value replaced, an attribute removed, an entry deleted.
  await history.modify(uuids[7]!, { sn: ["O'Brien"], mail: ["Obrien@Example.org"] });
  await history.modify(uuids[8]!, { title: [] });
  await history.delete(uuids[9]!);
  await history.settled();
  return { pool: db.pool, uuids };
}

/** The matching entries as the JSON comparison (the reference semantics) selects them. */
async function reference(pool: Pool, filter: FilterNode): Promise<string[]> {
  const params: unknown[] = ["user"];
  const where = compileFilterToSql(filter, { attributesColumn: "e.merged", params });
  const result = await pool.query<{ entry_uuid: string }>(
    `SELECT e.entry_uuid FROM (SELECT *, attributes || operational AS merged FROM ${ENTRIES}) AS e
      WHERE e.type = $1 AND ${where} ORDER BY e.entry_uuid`,
    params,
  );
  return result.rows.map((row) => row.entry_uuid);
}

const search = (filter: FilterNode, sort: SortKey[] = []) =>
  new SearchSql({ type: "user", filter, sort, selection: ALL });

const FILTERS = [
  "(sn=müller)",
  "(sn=MÜLLER)",
  "(sn=straße)",
  "(sn=strasse)",
  "(sn=i̇nci)",
  "(sn=İNCI)",
  "(sn=*)",
  "(!(sn=*))",
  "(!(sn=smith))",
  "(mail=U5@EXAMPLE.ORG)",
  "(mail=alias10@x.org)",
  "(cn=p3)",
  "(&(objectClass=inetOrgPerson)(title=engineer))",
  "(|(uid=u1)(uid=U2)(uid=u40)(uid=nobody))",
  "(|(uid=u1)(&(sn=smith)(title=*)))",
  "(|(uid=u1)(!(title=*)))",
  "(&(!(uid=u1))(|(givenName=anna)(givenName=BEN)))",
  "(!(&(sn=müller)(givenName=anna)))",
  "(title=50% off_\\5csale)",
  "(title=50%*)",
  "(title=*off_*)",
  "(title=*_\\5c*)",
  "(title=*%*)",
  "(title=eng*)",
  "(title=*ENGINEER)",
  "(title=s*n*r)",
  "(sn=m*)",
  "(sn=*ß*)",
  "(sn=*SS*)",
  "(cn=*)",
  "(givenName~=ANNA)",
  "(uidNumber>=100)",
  "(uidNumber<=100)",
  'uidNumber gt "19"',
  'uidNumber lt "19"',
  'sn sw "MÜ"',
  'sn co "LLE"',
  'sn ew "h"',
  'givenName ew "A"',
  `description = "${LONG}tail 0"`,
  `description = "${LONG}Tail 12"`,
  `description = "${LONG.toLowerCase()}"`,
  `description sw "${LONG}"`,
  `description co "${LONG.slice(40)}tail 2"`,
  `description ew "tail 18"`,
  `description gt "${LONG}tail 2"`,
  `description ge "${LONG}"`,
  `description lt "${LONG}tail 2"`,
  `description le "${LONG}"`,
  "(modifyTimestamp>=20000101000000Z)",
  "(entryUUID=*)",
  "(objectClass=groupOfNames)",
  "(&)",
  "(|)",
];

t.test("indexed filters select exactly what the JSON comparison selects", async (t) => {
  const { pool } = await setUp(t);
  for (const text of FILTERS) {
    const { ast } = parseFilter(text);
    const expected = await reference(pool, ast);
    const sql = search(ast);
    const page = await searchPage(pool, sql, { direction: "forward", limit: 1000 });
    t.same(
      page.rows.map((row) => row.entry_uuid),
      expected,
      text,
    );
    t.equal(Number(await countSearch(pool, sql)), expected.length, `${text}: count`);
    if (sql.matchSet) {
      const set = await pool.query<{ entry_uuid: string }>(
        `SELECT DISTINCT s.entry_uuid FROM (${sql.matchSet.sql}) AS s ORDER BY s.entry_uuid`,
        [...sql.matchSet.params],
      );
      t.same(
        set.rows.map((row) => row.entry_uuid),
        expected,
        `${text}: the set of its index ranges`,
      );
    }
  }
  t.ok(
    (await reference(pool, parseFilter("(sn=müller)").ast)).length >= 3,
    "the matrix compares non-empty results",
  );
});

const key = (name: string, descending = false): SortKey => ({
  kind: name === "dn" ? "dn" : name === "entryUUID" ? "entryUUID" : "attribute",
  name,
  operational: false,
  descending,
});
const sortOf = (text: string): SortKey[] =>
  text.split(",").map((part) => key(part.replace(/^-/, ""), part.startsWith("-")));

async function everyRow(pool: Pool, sql: SearchSql): Promise<SearchRow[]> {
  const result = await pool.query<SearchRow>(
    `SELECT * FROM (${sql.inner}) AS q ORDER BY ${sql.orderBy("forward")}`,
    sql.params,
  );
  return result.rows;
}

/**
 * A page walks the first sort key's index or sorts the matches (`WALK_ABOVE`), and a walk
 * sorts each group of the first key's ties by the second key or walks that key's index within
 * the group (`GROUP_WALK_ABOVE`), page by page: each way alone, and the ways alternating (a
 * cursor of one read on by another, as when the matches cross a bound between two requests),
 * must read every row once, in order.
 */
const STRATEGIES: readonly {
  name: string;
  walkAbove: (page: number) => number;
  groupAbove: (page: number) => number;
}[] = [
  { name: "walking", walkAbove: () => 0, groupAbove: () => Infinity },
  { name: "sorting", walkAbove: () => Infinity, groupAbove: () => Infinity },
  {
    name: "alternating",
    walkAbove: (page) => (page % 2 ? Infinity : 0),
    groupAbove: () => Infinity,
  },
  { name: "walking groups", walkAbove: () => 0, groupAbove: () => 0 },
  {
    name: "walking groups alternately",
    walkAbove: () => 0,
    groupAbove: (page) => (page % 2 ? Infinity : 0),
  },
  {
    name: "all three alternating",
    walkAbove: (page) => (page % 3 === 2 ? Infinity : 0),
    groupAbove: (page) => (page % 2 ? 0 : Infinity),
  },
];

/** Reads every page of a search forward and backward, by a strategy, against every row. */
async function readsEveryRow(
  t: Test,
  pool: Pool,
  strategy: (typeof STRATEGIES)[number],
  sortText: string,
  filterText: string,
): Promise<void> {
  const what = `${strategy.name} sort=${sortText} filter=${filterText}`;
  const sql = search(parseFilter(filterText).ast, sortOf(sortText));
  const expected = (await everyRow(pool, sql)).map((row) => row.entry_uuid);
  t.ok(expected.length > 0, `${what}: rows`);

  const forward: string[] = [];
  let position: KeysetPosition | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = await searchPage(pool, sql, {
      direction: "forward",
      limit: 3,
      walkAbove: strategy.walkAbove(pages),
      groupAbove: strategy.groupAbove(pages),
      ...(position ? { position } : {}),
    });
    forward.push(...page.rows.map((row) => row.entry_uuid));
    t.equal(page.behind, position !== undefined, `${what}: behind on page ${pages}`);
    if (!page.more) break;
    position = sql.positionOf(page.rows.at(-1)!);
  }
  t.same(forward, expected, `${what}: forward`);

  const backward: string[] = [];
  position = undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = await searchPage(pool, sql, {
      direction: "backward",
      limit: 4,
      walkAbove: strategy.walkAbove(pages),
      groupAbove: strategy.groupAbove(pages),
      ...(position ? { position } : {}),
    });
    backward.unshift(...page.rows.map((row) => row.entry_uuid));
    t.equal(page.behind, position !== undefined, `${what}: behind backward ${pages}`);
    if (!page.more) break;
    position = sql.positionOf(page.rows[0]!);
  }
  t.same(backward, expected, `${what}: backward`);
}

t.test("sorted pages walk forward and backward through every row once, in order", async (t) => {
  const { pool } = await setUp(t);
  const sorts = [
    "sn",
    "-sn",
    "sn,-givenName",
    "-sn,givenName",
    "givenName,-sn,uid",
    "-title,sn",
    "-givenName,uid",
    "-uidNumber",
    "title",
    "-title",
    "description",
    "-description",
    "dn",
    "-dn",
    "-entryUUID",
  ];
  const filters = ["(&)", "(objectClass=person)", "(!(sn=smith))", "(title=*engineer*)"];
  for (const strategy of STRATEGIES) {
    for (const sortText of sorts) {
      for (const filterText of filters) {
        await readsEveryRow(t, pool, strategy, sortText, filterText);
      }
    }
  }
});

t.test("a filter on the first sort key reads every row once, in order, either way", async (t) => {
  const { pool } = await setUp(t);
  // Walked within their one value (straße), or sorted (a later value meets strasse; a range).
  const filters = ["(sn=straße)", "(sn=strasse)", 'sn sw "MÜ"', "(&(title=*)(sn<=n))"];
  for (const strategy of STRATEGIES) {
    for (const sortText of ["sn", "-sn,givenName", "sn,cn", "sn,-cn,uid"]) {
      for (const filterText of filters) {
        await readsEveryRow(t, pool, strategy, sortText, filterText);
      }
    }
  }
});

t.test("a page stays put when its cursor's entry is deleted or changed", async (t) => {
  const db = await testDatabase(t);
  const store = await EventStore.open(db.pool);
  const history = await EntryHistory.start(t, db.pool, store);
  const ids: string[] = [];
  for (let i = 0; i < 9; i++) {
    ids.push(
      await history.add({
        dn: `uid=v${i},${PEOPLE}`,
        type: "user",
        attributes: { objectClass: ["person"], uid: [`v${i}`], sn: [`S${i % 3}`] },
      }),
    );
  }
  await history.settled();
  const sql = search(parseFilter("(&)").ast, sortOf("-sn"));
  const first = await searchPage(db.pool, sql, { direction: "forward", limit: 4 });
  const cursorRow = first.rows.at(-1)!;
  const position = sql.positionOf(cursorRow);
  await history.delete(cursorRow.entry_uuid);
  await history.settled();
  const second = await searchPage(db.pool, sql, { direction: "forward", limit: 10, position });
  const all = (await everyRow(db.pool, sql)).map((row) => row.entry_uuid);
  t.same(
    [...first.rows.slice(0, 3), ...second.rows].map((row) => row.entry_uuid),
    all,
    "nothing repeated, nothing skipped",
  );
  t.equal(second.behind, true, "rows before the deleted cursor row remain");
});

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

t.test("searches on a few thousand entries use the value indexes", async (t) => {
  const db = await testDatabase(t);
  const store = await EventStore.open(db.pool);
  await EntryHistory.start(t, db.pool, store); // creates the projection's tables
  await seedPeople(
    db.pool,
    5000,
    `jsonb_build_object('uid', jsonb_build_array('w' || g), 'sn', jsonb_build_array('Sn' || (g % 50)),
                        'title', jsonb_build_array((ARRAY['Engineer','Manager','Analyst'])[1 + g % 3]),
                        'uidNumber', jsonb_build_array((10000 + g)::text))`,
  );
  await db.pool.query("ANALYZE projection_entries.entries, projection_entries.entry_values");

  const plan = async (sql: SearchSql, limit = 51) => {
    const params = [...sql.params];
    const source = sql.walk ? sql.walkSource("keyed", params) : sql.inner;
    params.push(limit);
    const result = await db.pool.query<{ "QUERY PLAN": [{ Plan: unknown }] }>(
      `EXPLAIN (FORMAT JSON) SELECT * FROM (${source}) AS q
        ORDER BY ${sql.orderBy("forward", sql.walk ? 1 : 0)} LIMIT $${params.length}`,
      params,
    );
    return scans(result.rows[0]!["QUERY PLAN"][0].Plan);
  };

  const equality = await plan(search(parseFilter("uid = W123").ast));
  t.ok(equality.indexes.includes("entry_values_match"), `equality: ${JSON.stringify(equality)}`);
  t.same(equality.sequential, [], "equality: no sequential scan");

  const prefix = await plan(search(parseFilter('uid sw "w12"').ast));
  t.ok(prefix.indexes.includes("entry_values_match"), `prefix: ${JSON.stringify(prefix)}`);
  t.same(prefix.sequential, [], "prefix: no sequential scan");

  // At this size the planner may read the attribute's range of the btree rather than the
  // trigram index; either way no table is read whole.
  const substring = await plan(search(parseFilter('uid co "123"').ast));
  t.ok(
    substring.indexes.some(
      (name) => name === "entry_values_trigram" || name === "entry_values_match",
    ),
    `substring: ${JSON.stringify(substring)}`,
  );
  t.same(substring.sequential, [], "substring: no sequential scan");

  const both = await plan(search(parseFilter("(&(sn=Sn7)(title=Engineer))").ast));
  t.ok(both.indexes.includes("entry_values_match"), `and: ${JSON.stringify(both)}`);
  t.same(both.sequential, [], "and: no sequential scan");

  const sorted = await plan(search(parseFilter("title = engineer").ast, sortOf("-uidNumber")));
  t.ok(sorted.indexes.includes("entry_values_order_desc"), `sorted: ${JSON.stringify(sorted)}`);
  t.same(sorted.sequential, [], "sorted: no sequential scan");

  const ascending = await plan(search(parseFilter("(&)").ast, sortOf("sn")));
  t.ok(ascending.indexes.includes("entry_values_match"), `ascending: ${JSON.stringify(ascending)}`);
  t.same(ascending.sequential, [], "ascending: no sequential scan");
});

t.test(
  "a page walks the sort key's index when the filter matches more than the bound",
  async (t) => {
    const { pool } = await setUp(t);
    const settable = ["(sn=müller)", "(title=eng*)", "(uidNumber>=100)", "(|(uid=u1)(uid=u2))"];
    const negated = ["(!(sn=smith))", "(&(title=*)(!(givenName=anna)))"];
    for (const text of [...settable, ...negated]) {
      const { ast } = parseFilter(text);
      const matches = (await reference(pool, ast)).length;
      const sql = search(ast, sortOf("uid"));
      t.equal(sql.matchSet !== undefined, settable.includes(text), `${text}: counted from its set`);
      t.ok(matches > 1, `${text}: matches ${matches}`);
      t.equal(await walks(pool, sql, matches - 1), true, `${text}: walks above ${matches - 1}`);
      t.equal(await walks(pool, sql, matches), false, `${text}: sorts at ${matches}`);
    }
  },
);

t.test("a filter that narrows the first sort key to a range walks that range", async (t) => {
  const clustered = (filter: string, sort: string) =>
    search(parseFilter(filter).ast, sortOf(sort)).clustered;
  t.equal(clustered("(sn=Smith)", "sn"), true, "equality on the sort key");
  t.equal(clustered("(sn=Sm*)", "-sn,uid"), true, "a prefix of it, descending");
  t.equal(clustered("(sn=*mi*)", "sn"), false, "a substring without one says nothing");
  t.equal(clustered("(&(title=Engineer)(sn>=M))", "sn"), true, "in a conjunction");
  t.equal(clustered("(|(sn=Smith)(sn=Jones))", "sn"), false, "a disjunction says nothing");
  t.equal(clustered("(!(sn=Smith))", "sn"), false, "nor a negation");
  t.equal(clustered("(sn=*)", "sn"), false, "nor a presence test");
  t.equal(clustered("(title=Engineer)", "sn"), false, "another attribute");
  t.equal(clustered("(sn=Smith)", "dn"), false, "a sort that does not walk");

  const { pool } = await setUp(t);
  const walked = async (filter: string) =>
    walks(pool, search(parseFilter(filter).ast, sortOf("sn,cn")), 0);
  t.equal(await walked("(sn=straße)"), true, "every match in the range: walked");
  t.equal(await walked("(sn=müller)"), true, "the same for another group");
  t.equal(await walked("(sn=strasse)"), false, "a match by a later value: sorted");
  t.equal(await walked("(sn>=st)"), false, "a range of values: sorted");
  t.equal(await walked('sn sw "MÜ"'), false, "a prefix: sorted");
});
