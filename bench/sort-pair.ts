import { pino } from "pino";
import { entriesProjection, withSortPairs } from "../projections/entries/index.ts";
import { allProjections } from "../projections/index.ts";
import { parseSubschema } from "../src/directory/schema.ts";
import { checkAttributes, parseFilter } from "../src/filters/index.ts";
import { Projector } from "../src/projector/index.ts";
import { buildReaderIndexes } from "../src/projector/reader-indexes.ts";
import { AttributeCatalog } from "../src/rest/catalog.ts";
import { parseFields } from "../src/rest/fields.ts";
import { searchPage } from "../src/rest/search/page.ts";
import { SearchSql } from "../src/rest/search/sql.ts";
import { parseSort } from "../src/rest/sort.ts";
import { seed } from "./rest.ts";
import {
  benchDatabase,
  benchSize,
  fmt,
  machine,
  percentile,
  recordResults,
  sizeOption,
} from "./support.ts";

const ENTRIES = benchSize(100_000);
const STRING = "1.3.6.1.4.1.1466.115.121.1.15";
const catalog = AttributeCatalog.fromDirectorySchema(
  parseSubschema(
    ["cn", "sn", "givenName", "title", "description", "uid"].map(
      (name, i) => `( 9.9.9.${i} NAME '${name}' SYNTAX ${STRING} )`,
    ),
  ),
  [],
);

/**
 * `npm run bench -- sort-pair [--size 1m]`: the first page of `sn eq "Meyer"` sorted by `sn,cn`
 * (the rest benchmark's entries, straight into the projection), the same SQL the REST channel
 * runs (`SearchSql` + `searchPage`) on the pool: without the sort pair, then with
 * `sortPairs = [["sn", "cn"]]` and the pair's index built as annal builds it at start, then
 * without it again, on the same database.
 */
export async function sortPairBenchmark(): Promise<void> {
  const db = await benchDatabase();
  const log = pino({ level: "silent" });
  try {
    const projector = await Projector.start({ pool: db.pool, projections: allProjections, log });
    await projector.stop(); // the tables exist; the rows come straight from seed()
    process.stderr.write(`bench: sort-pair: seeding ${fmt(ENTRIES)} entries\n`);
    await seed(db.pool, 1, ENTRIES);
    const search = (paired: boolean) =>
      new SearchSql({
        type: "user",
        filter: checkAttributes(parseFilter('sn eq "Meyer"').ast, (n) => catalog.resolve(n)?.name)
          .ast,
        sort: parseSort("sn,cn", catalog).keys,
        selection: parseFields(undefined, catalog).selection,
        ...(paired ? { sortPairs: [["sn", "cn"]] as const } : {}),
      });
    const measure = async (paired: boolean, runs: number) => {
      const page = () => searchPage(db.pool, search(paired), { direction: "forward", limit: 50 });
      for (let i = 0; i < 20; i++) await page();
      const samples: number[] = [];
      for (let i = 0; i < runs; i++) {
        const start = process.hrtime.bigint();
        await page();
        samples.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
      samples.sort((a, b) => a - b);
      const row = { p50: percentile(samples, 50), p99: percentile(samples, 99), runs };
      process.stderr.write(
        `bench: sort-pair: ${paired ? "with" : "without"} the pair: p50 ${fmt(row.p50, 1)} p99 ${fmt(row.p99, 1)} ms\n`,
      );
      return row;
    };
    const before = await measure(false, 200);
    const started = performance.now();
    await buildReaderIndexes({
      pool: db.pool,
      projection: withSortPairs(entriesProjection, [{ type: "user", first: "sn", second: "cn" }]),
      schema: "projection_entries",
      log,
    });
    const built = (performance.now() - started) / 1000;
    const paired = await measure(true, 1000);
    const again = await measure(false, 200);
    const row = (what: string, m: { p50: number; p99: number; runs: number }) =>
      `| ${what} | ${fmt(m.runs)} | ${fmt(m.p50, 1)} | ${fmt(m.p99, 1)} |`;
    recordResults(
      `sort-pair${ENTRIES === 100_000 ? "" : `-${ENTRIES}`}`,
      `## Sort pairs: \`sn eq "Meyer"\` by \`sn,cn\`, ${fmt(ENTRIES)} entries

Command: \`npm run bench -- sort-pair${sizeOption()}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}

The rest benchmark's entries (20 surnames: ${fmt(ENTRIES / 20)} Meyers), the first page (50) of
\`sn eq "Meyer"\` sorted by \`sn,cn\`, the SQL the REST channel runs, on the pool, one at a time,
after 20 to warm up. The pair's index was built and analysed in ${fmt(built, 1)} s.

| page | pages | p50 ms | p99 ms |
| --- | ---: | ---: | ---: |
${row("without the sort pair", before)}
${row('with `sortPairs = [["sn", "cn"]]`', paired)}
${row("without the sort pair, again", again)}
`,
    );
  } finally {
    await db.close();
  }
}
