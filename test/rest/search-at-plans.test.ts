import t from "tap";
import { compileFilterToSql, parseFilter } from "../../src/filters/index.ts";
import type { FieldSelection } from "../../src/rest/fields.ts";
import { countSearch, searchPage } from "../../src/rest/search/page.ts";
import { SearchSql, type KeysetPosition } from "../../src/rest/search/sql.ts";
import { EventStore } from "../../src/store/index.ts";
import {
  ENTRY_VERSION_VALUES,
  ENTRY_VERSIONS,
  VALUE_SPAN_COLUMNS,
  valueSpanRows,
} from "../../projections/entry-versions/index.ts";
import { VALUE_KEY_LENGTH } from "../../projections/entries/index.ts";
import { EntryHistory } from "../support/entries.ts";
import {
  busiestSteps,
  explainAnalyzed,
  notingPool,
  type NotedStatement,
  vacuumedAtRest,
} from "../support/plans.ts";
import { testDatabase } from "../support/postgres.ts";

t.setTimeout(300_000);

const PEOPLE = 5000;
const MONTHS = 12;
const PAGE = 50;
/** The most rows one scan or Sort of a page's statements may handle: a few pages' worth. */
const BOUND = 4 * (PAGE + 1);
const ALL: FieldSelection = {
  allUser: true,
  allOperational: false,
  names: [],
  wildcard: false,
  explicit: false,
};

t.test("a page of a search at a moment reads about the page, not every version", async (t) => {
  const db = await testDatabase(t);
  const store = await EventStore.open(db.pool);
  await EntryHistory.start(t, db.pool, store); // creates the projection's tables
  // 5,000 people with a version a month over the last year, as the at benchmark seeds them:
  // the title changes every month (one in ten holds each of today's titles; the old ones are
  // spread otherwise), surname and given name never. Each given name lies within one
  // surname: a conjunction of the two matches 100 people.
  const yearAgo = new Date(Date.now() - 365 * 86_400_000);
  await db.pool.query(
    `INSERT INTO ${ENTRY_VERSIONS}
       (entry_uuid, version, valid_from, valid_to, deleted, type, dn, attributes, operational, position, created_position)
     SELECT u.uuid, m, $1::timestamptz + (m - 1) * interval '1 month',
            CASE WHEN m < $2 THEN $1::timestamptz + m * interval '1 month' END, false, 'user',
            'uid=w' || u.g || ',ou=people,dc=example,dc=org',
            jsonb_build_object('uid', jsonb_build_array('w' || g),
                               'sn', jsonb_build_array('Sn' || (g % 25)),
                               'givenName', jsonb_build_array('Gn' || (g % 50)),
                               'title', jsonb_build_array(CASE WHEN m < $2
                                 THEN 'Old ' || m || '-' || (g % 7) ELSE 'T' || (g % 10) END)),
            '{}', g * $2 + m, g * $2 + 1
       FROM (SELECT g, gen_random_uuid() AS uuid FROM generate_series(1, $3::int) AS g) AS u
      CROSS JOIN generate_series(1, $2::int) AS m`,
    [yearAgo, MONTHS, PEOPLE],
  );
  await db.pool.query(
    `INSERT INTO ${ENTRY_VERSION_VALUES} (${VALUE_SPAN_COLUMNS})
     SELECT ${VALUE_SPAN_COLUMNS} FROM (${valueSpanRows(ENTRY_VERSIONS, "$1")}) AS s`,
    [VALUE_KEY_LENGTH],
  );
  // Vacuumed, as autovacuum leaves a table: an index-only scan needs the visibility map.
  await vacuumedAtRest(db.pool, [ENTRY_VERSIONS, ENTRY_VERSION_VALUES]);

  /** Every statement a page runs, explained as run: the most rows one scan or Sort handled. */
  const page = async (
    sql: SearchSql,
    direction: "forward" | "backward",
    position?: KeysetPosition,
  ) => {
    const statements: NotedStatement[] = [];
    const result = await searchPage(notingPool(db.pool, statements), sql, {
      direction,
      limit: PAGE,
      ...(position ? { position } : {}),
    });
    let handled = 0;
    for (const statement of statements) {
      const { scanned, sorted } = busiestSteps(await explainAnalyzed(db.pool, statement));
      handled = Math.max(handled, scanned, sorted);
    }
    return { ...result, handled };
  };
  /** The matches by the JSON comparison of the versions valid then, in entryUUID order. */
  const expected = async (filter: string, at: Date) => {
    const params: unknown[] = [at];
    const where = compileFilterToSql(parseFilter(filter).ast, {
      attributesColumn: "v.attributes",
      params,
    });
    const result = await db.pool.query<{ entry_uuid: string }>(
      `SELECT v.entry_uuid FROM ${ENTRY_VERSIONS} AS v
        WHERE NOT v.deleted AND v.valid_from <= $1 AND coalesce(v.valid_to, 'infinity') > $1
          AND ${where} ORDER BY v.entry_uuid`,
      params,
    );
    return result.rows.map((row) => row.entry_uuid);
  };

  const weekAgo = new Date(Date.now() - 7 * 86_400_000);
  // Within the sixth month's versions, whatever the months' lengths.
  const halfYearAgo = new Date(yearAgo.getTime() + 167 * 86_400_000);
  for (const [what, filter, at] of [
    ["a title's holders a week ago", 'title eq "T3"', weekAgo],
    ["a title's holders half a year ago", `title eq "Old 6-3"`, halfYearAgo],
    ["a conjunction a week ago", "(&(sn=Sn7)(givenName=Gn32))", weekAgo],
    ["a conjunction half a year ago", "(&(sn=Sn7)(givenName=Gn32))", halfYearAgo],
  ] as const) {
    const sql = new SearchSql({
      type: "user",
      filter: parseFilter(filter).ast,
      sort: [],
      selection: ALL,
      at,
    });
    const all = await expected(filter, at);
    t.ok(all.length >= PAGE, `${what}: ${all.length} matches, a page or more`);
    const first = await page(sql, "forward");
    t.same(
      first.rows.map((row) => row.entry_uuid),
      all.slice(0, PAGE),
      `${what}: the first page`,
    );
    t.ok(first.handled <= BOUND, `${what}: one scan or sort handled ${first.handled} rows at most`);
    t.equal(Number(await countSearch(db.pool, sql)), all.length, `${what}: the count`);
    if (!first.more) continue;
    const cursor = sql.positionOf(first.rows.at(-1)!);
    const second = await page(sql, "forward", cursor);
    t.same(
      second.rows.map((row) => row.entry_uuid),
      all.slice(PAGE, 2 * PAGE),
      `${what}: the next page by its cursor`,
    );
    t.ok(second.behind, `${what}: the next page knows rows lie behind it`);
    t.ok(second.handled <= BOUND, `${what}, next page: ${second.handled} rows at most`);
    const back = await page(sql, "backward", sql.positionOf(second.rows[0]!));
    t.same(
      back.rows.map((row) => row.entry_uuid),
      all.slice(0, PAGE),
      `${what}: the page before, read backward`,
    );
    t.ok(back.handled <= BOUND, `${what}, page before: ${back.handled} rows at most`);
  }
});
