import t from "tap";
import {
  entriesProjection,
  sortPairIndexName,
  withSortPairs,
  type SortPair,
} from "../../projections/entries/index.ts";
import { allProjections } from "../../src/app/index.ts";
import { parseConfig } from "../../src/config/index.ts";
import { parseFilter, type FilterNode } from "../../src/filters/index.ts";
import { buildReaderIndexes } from "../../src/projector/reader-indexes.ts";
import type { FieldSelection } from "../../src/rest/fields.ts";
import { searchPage } from "../../src/rest/search/page.ts";
import { SearchSql, type KeysetPosition } from "../../src/rest/search/sql.ts";
import type { SortKey } from "../../src/rest/sort.ts";
import { EventStore } from "../../src/store/index.ts";
import { EntryHistory, seedPeople } from "../support/entries.ts";
import {
  explainAnalyzed,
  notingPool,
  planNodes,
  rowsHandled,
  type NotedStatement,
  vacuumedAtRest,
} from "../support/plans.ts";
import { testDatabase } from "../support/postgres.ts";

t.setTimeout(300_000);

const ENTRY_COUNT = 5000;
/** Two surnames: each group of ties holds about 2,500 entries, more than any bound of a page. */
const SURNAMES = 2;
const PAIR: SortPair = { type: "user", first: "sn", second: "cn" };
const ALL: FieldSelection = {
  allUser: true,
  allOperational: false,
  names: [],
  wildcard: false,
  explicit: false,
};

const EVERY_ENTRY: FilterNode = { op: "and", filters: [] };

const sortOf = (text: string): SortKey[] =>
  text.split(",").map((part) => ({
    kind: "attribute",
    name: part.replace(/^-/, ""),
    operational: false,
    descending: part.startsWith("-"),
  }));
const search = (filter: string, sort: string, paired: boolean) =>
  new SearchSql({
    type: "user",
    filter: filter === "" ? EVERY_ENTRY : parseFilter(filter).ast,
    sort: sortOf(sort),
    selection: ALL,
    ...(paired ? { sortPairs: [[PAIR.first, PAIR.second]] as const } : {}),
  });

t.test(
  "a sort by a configured pair reads each group of the first key's ties as one range of the pair's index, with the pages it gave before",
  async (t) => {
    const db = await testDatabase(t);
    const store = await EventStore.open(db.pool);
    await EntryHistory.start(t, db.pool, store); // creates the projection's tables
    // Written straight into the projection, as the rest benchmark seeds it. Every 97th person
    // has no cn (the group's entries without the second key come last), every 89th no sn.
    await seedPeople(
      db.pool,
      ENTRY_COUNT,
      `jsonb_strip_nulls(jsonb_build_object(
         'uid', jsonb_build_array('w' || g),
         'sn', CASE WHEN g % 89 <> 0 THEN jsonb_build_array('Sn' || (g % ${SURNAMES})) END,
         'cn', CASE WHEN g % 97 <> 0
                    THEN jsonb_build_array('Person ' || lpad(((g * 7919) % 600)::text, 5, '0')) END,
         'title', jsonb_build_array((ARRAY['Engineer','Manager','Analyst'])[1 + g % 3])))`,
    );
    await vacuumedAtRest(db.pool, [
      "projection_entries.entries",
      "projection_entries.entry_values",
    ]);
    // The index as annal builds it at start for `sortPairs = [["sn", "cn"]]`, once the tables
    // are at rest: its build gathers the statistics of its values itself.
    const built = await buildReaderIndexes({
      pool: db.pool,
      projection: withSortPairs(entriesProjection, [PAIR]),
      schema: "projection_entries",
      log: { info: () => {} },
    });
    t.equal(built, "complete");

    /** Every statement of a page, explained as run. */
    const page = async (
      sql: SearchSql,
      direction: "forward" | "backward",
      position?: KeysetPosition,
    ) => {
      const statements: NotedStatement[] = [];
      const result = await searchPage(notingPool(db.pool, statements), sql, {
        direction,
        limit: 50,
        ...(position ? { position } : {}),
      });
      const plans = [];
      for (const statement of statements) {
        plans.push({ statement, nodes: planNodes(await explainAnalyzed(db.pool, statement)) });
      }
      return { ...result, plans };
    };
    /** Up to 4 pages forward by their cursors, and the page before the last one's first row. */
    const walk = async (sql: SearchSql) => {
      const forward: string[][] = [];
      let position: KeysetPosition | undefined;
      let last: Awaited<ReturnType<typeof page>> | undefined;
      for (let n = 0; n < 4; n++) {
        last = await page(sql, "forward", position);
        forward.push(last.rows.map((row) => row.entry_uuid));
        if (!last.more) break;
        position = sql.positionOf(last.rows.at(-1)!);
      }
      const back = await page(sql, "backward", sql.positionOf(last!.rows[0]!));
      return { forward, back: back.rows.map((row) => row.entry_uuid) };
    };
    /** The rows as sorting every match gives them. */
    const sorted = async (sql: SearchSql) => {
      const result = await db.pool.query<{ entry_uuid: string }>(
        `SELECT * FROM (${sql.inner}) AS q ORDER BY ${sql.orderBy("forward")}`,
        sql.params,
      );
      return result.rows.map((row) => row.entry_uuid);
    };

    const index = sortPairIndexName(PAIR);
    for (const [filter, sort] of [
      ['sn eq "Sn0"', "sn,cn"],
      ['sn eq "Sn1"', "-sn,cn"],
      ["", "sn,cn"],
      ['title eq "Engineer"', "sn,cn"],
      ['cn ge "Person 00590"', "sn,cn"],
    ] as const) {
      const what = `${filter || "no filter"} by ${sort}`;
      const paired = search(filter, sort, true);
      const unpaired = search(filter, sort, false);
      t.ok(paired.pair, `${what}: the pair applies`);
      t.notOk(unpaired.pair, `${what}: without the configuration, no pair`);
      const pages = await walk(paired);
      t.same(pages, await walk(unpaired), `${what}: the pages the search gave without the pair`);
      const all = await sorted(paired);
      const read = pages.forward.flat();
      t.ok(read.length >= 80, `${what}: ${read.length} rows over ${pages.forward.length} pages`);
      t.same(read, all.slice(0, read.length), `${what}: in the order sorting every match gives`);
      const before = all.indexOf(pages.forward.at(-1)![0]!);
      t.same(pages.back, all.slice(Math.max(0, before - 50), before), `${what}: and backward`);
    }

    // `sn eq "Sn0"` by `sn,cn`: its page is one range of the pair's index, nothing sorted.
    const sql = search('sn eq "Sn0"', "sn,cn", true);
    for (const position of [undefined, "next"] as const) {
      const first = await page(sql, "forward");
      const read =
        position === undefined
          ? first
          : await page(sql, "forward", sql.positionOf(first.rows.at(-1)!));
      const what = position === undefined ? "the first page" : "the next page";
      const sorts = read.plans.flatMap(({ nodes }) =>
        nodes.filter((node) => /Sort/.test(node["Node Type"])),
      );
      t.same(sorts, [], `${what}: no statement sorts`);
      const ranged = read.plans.filter(({ nodes }) =>
        nodes.some((node) => node["Index Name"] === index),
      );
      t.equal(ranged.length, position === undefined ? 1 : 2, `${what}: reads the pair's index`);
      const scan = ranged[0]!.nodes.find((node) => node["Index Name"] === index)!;
      t.match(scan["Node Type"], /^Index Scan$/, `${what}: an index scan`);
      // A page and the cursor's ties of the second key, which the keyset passes over.
      t.ok(rowsHandled(scan) <= 60, `${what}: the range read ${rowsHandled(scan)} rows`);
      t.ok(
        read.plans.every(({ nodes }) => nodes.every((node) => rowsHandled(node) <= 60)),
        `${what}: no step of any statement handled much more than a page`,
      );
    }
  },
);

t.test(
  "the pair's index is among the entries projection's readers' indexes only when configured",
  async (t) => {
    const table = (name: string) => `s.${name}`;
    const plain = entriesProjection.indexes!(table);
    t.same(withSortPairs(entriesProjection, []).indexes!(table), plain);
    const paired = withSortPairs(entriesProjection, [PAIR]).indexes!(table);
    t.same(paired.slice(0, plain.length), plain);
    t.match(paired.at(-1), new RegExp(`^CREATE INDEX ${sortPairIndexName(PAIR)} ON s\\.entries`));
    t.match(
      paired.at(-1),
      /\(type, \(left\(lower\(attributes -> 'sn'::text ->> 0\), 200\) COLLATE "C"\), \(left\(lower\(attributes -> 'cn'::text ->> 0\), 200\) COLLATE "C"\), entry_uuid\)$/,
    );
    t.match(sortPairIndexName(PAIR), /^entries_sort_user_sn_cn_[0-9a-f]{8}$/);

    // What annal runs: the projections of its configuration.
    const config = (pairs: string) =>
      parseConfig(
        `[directory]\nurl = "ldap://127.0.0.1:389"\nbindDN = "cn=admin,dc=example,dc=org"\n` +
          `password = "\${LDAP_PASSWORD}"\nbase = "dc=example,dc=org"\n\n[[directory.types]]\n` +
          `name = "user"\nbase = "ou=people,dc=example,dc=org"\n${pairs}`,
        { path: "/srv/annal.toml", env: { LDAP_PASSWORD: "pw" } },
      );
    const entriesOf = (pairs: string) =>
      allProjections(config(pairs)).find((projection) => projection.name === "entries")!.indexes!(
        table,
      );
    t.same(entriesOf(""), plain, "no pair: the indexes of before");
    t.same(entriesOf('sortPairs = [["sn", "cn"]]'), paired, "a pair: its index too");
  },
);

t.test(
  "sortPairs takes pairs of two different attribute names, and says so otherwise",
  async (t) => {
    const config = (pairs: string) =>
      parseConfig(
        `[directory]\nurl = "ldap://127.0.0.1:389"\nbindDN = "cn=admin,dc=example,dc=org"\n` +
          `password = "\${LDAP_PASSWORD}"\nbase = "dc=example,dc=org"\n\n[[directory.types]]\nname = "user"\n` +
          `base = "ou=people,dc=example,dc=org"\nsortPairs = ${pairs}\n`,
        { path: "/srv/annal.toml", env: { LDAP_PASSWORD: "pw" } },
      );
    t.same(config('[["sn", "cn"], ["sn", "givenName"]]').directory?.types[0]?.sortPairs, [
      ["sn", "cn"],
      ["sn", "givenName"],
    ]);
    for (const [pairs, message] of [
      ['[["sn"]]', /directory\.types\[0\]\.sortPairs.*expected a pair of attribute names/s],
      ['[["sn", "SN"]]', /expected two different attributes/],
      ['[["sn", "cn;lang-de"]]', /expected an attribute's name/],
      ['"sn,cn"', /expected an array of pairs of attribute names/],
    ] as const) {
      t.throws(() => config(pairs), { code: "ANNAL_CONFIG_INVALID", message }, pairs);
    }
  },
);
