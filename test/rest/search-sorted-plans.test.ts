import t from "tap";
import { parseFilter } from "../../src/filters/index.ts";
import type { FieldSelection } from "../../src/rest/fields.ts";
import { searchPage, WALK_ABOVE } from "../../src/rest/search/page.ts";
import { SearchSql, type KeysetPosition } from "../../src/rest/search/sql.ts";
import type { SortKey } from "../../src/rest/sort.ts";
import { EventStore } from "../../src/store/index.ts";
import { EntryHistory, seedPeople } from "../support/entries.ts";
import {
  busiestSteps,
  explainAnalyzed,
  notingPool,
  type NotedStatement,
  vacuumedAtRest,
} from "../support/plans.ts";
import { testDatabase } from "../support/postgres.ts";

t.setTimeout(300_000);

const ENTRY_COUNT = 5000;
/** Two surnames: each group of ties holds 2,500 entries, more than any bound of a page. */
const SURNAMES = 2;
const ALL: FieldSelection = {
  allUser: true,
  allOperational: false,
  names: [],
  wildcard: false,
  explicit: false,
};

const sortOf = (text: string): SortKey[] =>
  text.split(",").map((part) => ({
    kind: "attribute",
    name: part.replace(/^-/, ""),
    operational: false,
    descending: part.startsWith("-"),
  }));
const search = (filter: string, sort: string) =>
  new SearchSql({
    type: "user",
    filter: parseFilter(filter).ast,
    sort: sortOf(sort),
    selection: ALL,
  });

t.test("a page of a filter on the first sort key reads a bounded range of one index", async (t) => {
  const db = await testDatabase(t);
  const store = await EventStore.open(db.pool);
  await EntryHistory.start(t, db.pool, store); // creates the projection's tables
  // Written straight into the projection, as the rest benchmark seeds it: surnames and names
  // independent of each other and of the entries' uuids.
  await seedPeople(
    db.pool,
    ENTRY_COUNT,
    `jsonb_build_object('uid', jsonb_build_array('w' || g),
                        'sn', jsonb_build_array('Sn' || (g % ${SURNAMES})),
                        'cn', jsonb_build_array('Person ' || lpad(((g * 7919) % ${ENTRY_COUNT})::text, 5, '0')),
                        'title', jsonb_build_array((ARRAY['Engineer','Manager','Analyst'])[1 + g % 3]))`,
  );
  // Vacuumed, as autovacuum leaves a table: an index-only scan needs the visibility map.
  await vacuumedAtRest(db.pool, ["projection_entries.entries", "projection_entries.entry_values"]);

  /** Every statement a page runs, explained as run: the most rows one scan or Sort handled. */
  const page = async (sql: SearchSql, position?: KeysetPosition) => {
    const statements: NotedStatement[] = [];
    const result = await searchPage(notingPool(db.pool, statements), sql, {
      direction: "forward",
      limit: 50,
      ...(position ? { position } : {}),
    });
    let scanned = 0;
    let sorted = 0;
    for (const statement of statements) {
      const most = busiestSteps(await explainAnalyzed(db.pool, statement));
      scanned = Math.max(scanned, most.scanned);
      sorted = Math.max(sorted, most.sorted);
    }
    return { rows: result.rows, scanned, sorted };
  };
  /** The page as sorting every match gives it. */
  const expected = async (sql: SearchSql, offset = 0) => {
    const params = [...sql.params, offset];
    const result = await db.pool.query<{ entry_uuid: string }>(
      `SELECT * FROM (${sql.inner}) AS q ORDER BY ${sql.orderBy("forward")}
        LIMIT 50 OFFSET $${params.length}`,
      params,
    );
    return result.rows.map((row) => row.entry_uuid);
  };

  const matches = ENTRY_COUNT / SURNAMES;
  t.ok(matches > WALK_ABOVE + 1, `a group (${matches}) is larger than the bound`);
  for (const [filter, sort] of [
    ['sn eq "Sn0"', "sn,cn"],
    ['sn eq "Sn1"', "-sn,-cn"],
    ['sn eq "Sn0"', "sn"],
    ['uid eq "w17"', "sn,cn"],
  ] as const) {
    const what = `${filter} by ${sort}`;
    const sql = search(filter, sort);
    const first = await page(sql);
    t.same(
      first.rows.map((row) => row.entry_uuid),
      await expected(sql),
      `${what}: the rows sorting every match gives`,
    );
    t.ok(first.scanned <= WALK_ABOVE + 1, `${what}: one scan read ${first.scanned} rows at most`);
    t.ok(first.sorted <= WALK_ABOVE + 1, `${what}: one sort took ${first.sorted} rows at most`);
    if (first.rows.length < 50) continue;
    const second = await page(sql, sql.positionOf(first.rows.at(-1)!));
    t.same(
      second.rows.map((row) => row.entry_uuid),
      await expected(sql, 50),
      `${what}: the next page by its cursor`,
    );
    t.ok(second.scanned <= WALK_ABOVE + 1, `${what}, next page: ${second.scanned} rows scanned`);
    t.ok(second.sorted <= WALK_ABOVE + 1, `${what}, next page: ${second.sorted} rows sorted`);
  }
});
