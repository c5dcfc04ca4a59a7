import { pino } from "pino";
import os from "node:os";
import { compileFilterToSql, parseFilter, type FilterNode } from "../src/filters/index.ts";
import { Projector } from "../src/projector/index.ts";
import type { FieldSelection } from "../src/rest/fields.ts";
import { searchPage } from "../src/rest/search/page.ts";
import { SearchSql } from "../src/rest/search/sql.ts";
import { allProjections } from "../projections/index.ts";
import { VALUE_KEY_LENGTH } from "../projections/entries/index.ts";
import {
  ENTRY_VERSION_VALUES,
  ENTRY_VERSIONS,
  VALUE_SPAN_COLUMNS,
  valueSpanRows,
} from "../projections/entry-versions/index.ts";
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

/**
 * `npm run bench -- at [--size 100k]`: a REST search at a moment against the same search now,
 * in the same run on the same database. The entries (`--size`, 2,000 by default) are seeded
 * as the REST benchmark seeds them; each has a year of changes behind it in `entry_versions`
 * and its value index, spans computed by the projection's own statement (`valueSpanRows`): one
 * version a month, the title and the description changing each month, the last version the
 * entry as it is now. Measured at the SQL level (`searchPage`, as the REST channel reads a
 * page), the two taking turns request by request.
 */
const ENTRIES = benchSize(2_000);
const MONTHS = 12;
const RUNS = 200;
const WARMUP = 20;
/**
 * The old JSON comparison reads every version valid at the moment: seconds a page at 100,000
 * entries, so beyond 10,000 it takes its turn in the first 20 rounds after the warm-up only.
 */
const JSON_RUNS = ENTRIES > 10_000 ? 20 : RUNS;
const ALL: FieldSelection = {
  allUser: true,
  allOperational: false,
  names: [],
  wildcard: false,
  explicit: false,
};

export async function atBenchmark(): Promise<void> {
  const db = await benchDatabase();
  const { pool } = db;
  try {
    const projector = await Projector.start({
      pool,
      projections: allProjections,
      log: pino({ level: "silent" }),
    });
    await projector.stop(); // the tables exist; the rows come straight from here
    process.stderr.write(`bench: at: seeding ${fmt(ENTRIES)} entries, ${MONTHS} versions each\n`);
    await seed(pool, 1, ENTRIES);
    const yearAgo = new Date(Date.now() - 365 * 86_400_000);
    await pool.query(
      `INSERT INTO ${ENTRY_VERSIONS}
         (entry_uuid, version, valid_from, valid_to, deleted, type, dn, attributes, operational, position, created_position)
       SELECT e.entry_uuid, m, $1::timestamptz + (m - 1) * interval '1 month',
              CASE WHEN m < $2 THEN $1::timestamptz + m * interval '1 month' END, false, e.type, e.dn,
              CASE WHEN m < $2 THEN e.attributes || jsonb_build_object(
                     'title', jsonb_build_array('Title ' || m || '-' || (e.created_position % 7)),
                     'description', jsonb_build_array('Month ' || m))
                   ELSE e.attributes END,
              e.operational, e.created_position * $2 + m, e.created_position * $2 + 1
         FROM projection_entries.entries AS e CROSS JOIN generate_series(1, $2) AS m`,
      [yearAgo, MONTHS],
    );
    await pool.query(
      `INSERT INTO ${ENTRY_VERSION_VALUES}
         (${VALUE_SPAN_COLUMNS})
       SELECT ${VALUE_SPAN_COLUMNS} FROM (${valueSpanRows(ENTRY_VERSIONS, "$1")}) AS s`,
      [VALUE_KEY_LENGTH],
    );
    await pool.query(`VACUUM ANALYZE ${ENTRY_VERSIONS}, ${ENTRY_VERSION_VALUES}`);
    const sample = (
      await pool.query<{ sn: string; given: string; title: string }>(
        `SELECT attributes->'sn'->>0 AS sn, attributes->'givenName'->>0 AS given,
                attributes->'title'->>0 AS title
           FROM projection_entries.entries WHERE dn_norm LIKE 'uid=user123,%'`,
      )
    ).rows[0]!;
    const searches: { what: string; filter: FilterNode }[] = [
      { what: "equality: `uid = user<n>`", filter: parseFilter('uid eq "user123"').ast },
      {
        what: "selective conjunction: `(&(sn=…)(givenName=…))`",
        filter: parseFilter(`(&(sn=${sample.sn})(givenName=${sample.given}))`).ast,
      },
      {
        what: "a title's holders (≈1 in 10 now), first 50",
        filter: parseFilter(`title eq "${sample.title}"`).ast,
      },
      {
        what: 'substring: `mail co "user12"`, first 50',
        filter: parseFilter('mail co "user12"').ast,
      },
    ];
    const moments = [
      { what: "a week ago", at: new Date(Date.now() - 7 * 86_400_000) },
      { what: "half a year ago", at: new Date(Date.now() - 182 * 86_400_000) },
    ];
    const rows: string[] = [];
    for (const search of searches) {
      for (const moment of moments) {
        process.stderr.write(`bench: at: ${search.what}, ${moment.what}\n`);
        const now = new SearchSql({
          type: "user",
          filter: search.filter,
          sort: [],
          selection: ALL,
        });
        const then = new SearchSql({
          type: "user",
          filter: search.filter,
          sort: [],
          selection: ALL,
          at: moment.at,
        });
        // The way a search at a moment read before the versions' value index: the versions
        // valid then, each one's JSON compared (`compileFilterToSql`, the same semantics).
        const jsonParams: unknown[] = ["user", moment.at];
        const jsonFilter = compileFilterToSql(search.filter, {
          attributesColumn: "e.a",
          params: jsonParams,
        });
        const jsonSql = `SELECT * FROM (SELECT e.*, e.attributes || e.operational AS a
            FROM ${ENTRY_VERSIONS} AS e WHERE e.type = $1 AND NOT e.deleted
             AND e.valid_from <= $2 AND coalesce(e.valid_to, 'infinity') > $2) AS e
           WHERE ${jsonFilter} ORDER BY e.entry_uuid LIMIT 51`;
        const timings = { now: [] as number[], then: [] as number[], json: [] as number[] };
        for (let run = 0; run < WARMUP + RUNS; run++) {
          for (const [key, sql] of [
            ["now", now],
            ["then", then],
            ["json", undefined],
          ] as const) {
            if (!sql && (run < WARMUP ? JSON_RUNS < RUNS : run >= WARMUP + JSON_RUNS)) continue;
            const start = process.hrtime.bigint();
            if (sql) await searchPage(pool, sql, { direction: "forward", limit: 50 });
            else await pool.query(jsonSql, jsonParams);
            const ms = Number(process.hrtime.bigint() - start) / 1e6;
            if (run >= WARMUP) timings[key].push(ms);
          }
        }
        timings.now.sort((a, b) => a - b);
        timings.then.sort((a, b) => a - b);
        timings.json.sort((a, b) => a - b);
        const [nowP50, thenP50] = [percentile(timings.now, 50), percentile(timings.then, 50)];
        const jsonP50 = percentile(timings.json, 50);
        rows.push(
          `| ${search.what} | ${moment.what} | ${fmt(thenP50, 2)} / ${fmt(percentile(timings.then, 99), 2)} | ${fmt(nowP50, 2)} / ${fmt(percentile(timings.now, 99), 2)} | ${fmt(thenP50 / nowP50, 2)} | ${fmt(jsonP50, 2)} (${fmt(jsonP50 / nowP50, 2)}) |`,
        );
      }
    }
    recordResults(
      `at${ENTRIES === 2_000 ? "" : `-${ENTRIES}`}`,
      `## Searches at a moment, ${fmt(ENTRIES)} entries with a year of changes

Command: \`npm run bench -- at${sizeOption()}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}; load average at the end ${fmt(os.loadavg()[0]!, 1)} (1 min) on ${os.cpus().length} cores

A page of 50 of a REST search \`at\` a moment (the versions valid then, filtered through
\`entry_version_values\`) against the same search now (\`entries\`, filtered through
\`entry_values\`), in the same run, taking turns; ${fmt(RUNS)} pages each after ${WARMUP} to
warm up, at the SQL level (\`searchPage\`)${JSON_RUNS < RUNS ? ` (the JSON comparison: its first ${JSON_RUNS} turns, no warm-up)` : ""}. Each entry has ${MONTHS} versions, one a month
over the last year, its title and description changing every month. The ratio is at / now
(p50); the goal is at most 3. The last column is the way searches at a moment read before
the versions' value index (each version valid then compared by its JSON), p50 and its ratio
to now, measured in the same turns.

| search | moment | at p50 / p99 (ms) | now p50 / p99 (ms) | ratio | before: JSON p50 (ratio) |
| --- | --- | ---: | ---: | ---: | ---: |
${rows.join("\n")}`,
    );
  } finally {
    await db.close();
  }
}
