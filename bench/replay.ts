/**
 * `npm run bench -- replay [--size 100k]`: a rebuild of the `entries` projection against the raw
 * read of the same log, with its set-wise replay (`Projection.replay`: folded in memory, written
 * by COPY, the values indexed once at the end) and batch by batch through `apply`.
 *
 * `--profile <dir>`: each rebuild's statements (\`pg_stat_statements\`, the 15 of most time, of
 * its last pass) into `<dir>`; run it as `node --cpu-prof --cpu-prof-dir <dir> bench/run.ts
 * replay --profile <dir>` for the CPU profile of the process too. Its figures are not recorded.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { entriesProjection } from "../projections/index.ts";
import { replayProjection, type AnyProjection } from "../src/projector/index.ts";
import {
  benchDatabase,
  benchSize,
  fmt,
  machine,
  recordResults,
  sizeOption,
  time,
} from "./support.ts";

/** Entries in the log; each has a first snapshot and then `CHANGES` modifications. */
const ENTRIES = benchSize(20_000);
const CHANGES = 3;
const PAGE = 1_000;
const TURNS = 2;
const PROFILE_DIR = process.argv.includes("--profile")
  ? path.resolve(process.argv[process.argv.indexOf("--profile") + 1] ?? "")
  : undefined;

/** One person's state in SQL, `g` the entry's number and `v` its version. */
const STATE = `jsonb_build_object(
  'dn', 'uid=p' || g || ',ou=people,dc=example,dc=org',
  'type', 'user',
  'attributes', jsonb_build_object(
    'objectClass', jsonb_build_array('inetOrgPerson', 'organizationalPerson', 'person', 'top'),
    'uid', jsonb_build_array('p' || g), 'cn', jsonb_build_array('Person ' || g),
    'sn', jsonb_build_array('Number' || g), 'givenName', jsonb_build_array('Given' || g),
    'mail', jsonb_build_array('p' || g || '@example.org'),
    'title', jsonb_build_array('Title ' || v), 'telephoneNumber', jsonb_build_array('+1 555 ' || g),
    'description', jsonb_build_array('Version ' || v || ' of person ' || g)),
  'operational', jsonb_build_object(
    'entryUUID', jsonb_build_array(u::text),
    'createTimestamp', jsonb_build_array('20261101000000Z'),
    'modifyTimestamp', jsonb_build_array(to_char(timestamp '2026-11-01' + v * interval '1 minute', 'YYYYMMDDHH24MISS') || 'Z'),
    'creatorsName', jsonb_build_array('cn=admin,dc=example,dc=org'),
    'modifiersName', jsonb_build_array('cn=admin,dc=example,dc=org')))`;

export async function replayBenchmark(): Promise<void> {
  const db = await benchDatabase(
    PROFILE_DIR
      ? { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.track": "all" }
      : {},
  );
  const { pool } = db;
  if (PROFILE_DIR) {
    mkdirSync(PROFILE_DIR, { recursive: true });
    await pool.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  }
  /** `pass`, its statements written to the profile's directory as `name`. */
  const profiled = (name: string, pass: () => Promise<void>) => async () => {
    if (!PROFILE_DIR) return pass();
    await pool.query("SELECT pg_stat_statements_reset()");
    await pass();
    const { rows } = await pool.query<{ line: string }>(
      `SELECT format('%s ms  %s calls  %s', round(total_exec_time), calls,
                     left(regexp_replace(query, '\\s+', ' ', 'g'), 300)) AS line
         FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 15`,
    );
    writeFileSync(
      path.join(PROFILE_DIR, `statements-${name}.txt`),
      rows.map((r) => r.line).join("\n"),
    );
  };
  try {
    // The log: every entry's snapshot, then each entry modified CHANGES times, a round of
    // every entry at a time (so a batch holds many entries, each once or twice).
    await pool.query(
      `CREATE TABLE bench_people AS
         SELECT g, gen_random_uuid() AS u FROM generate_series(1, $1::int) AS g`,
      [ENTRIES],
    );
    for (let v = 1; v <= CHANGES + 1; v++) {
      const state = STATE;
      const before = STATE.replaceAll("v * interval", "(v - 1) * interval").replaceAll(
        "'Title ' || v",
        "'Title ' || (v - 1)",
      );
      await pool.query(
        `INSERT INTO events (id, stream_id, stream_version, type, data, occurred_at)
         SELECT gen_random_uuid(), 'entry-' || u, v, t.type, t.data,
                timestamptz '2026-11-01' + v * interval '1 minute'
           FROM (SELECT g, u, $1::int AS v FROM bench_people ORDER BY g) AS p,
           LATERAL (SELECT CASE WHEN v = 1 THEN 'EntrySnapshot' ELSE 'EntryModified' END AS type,
                           CASE WHEN v = 1
                                THEN jsonb_build_object('entryUUID', u::text, 'reason', 'import',
                                                        'state', ${state})
                                ELSE jsonb_build_object('entryUUID', u::text, 'changeType', 'modify',
                                       'dn', 'uid=p' || g || ',ou=people,dc=example,dc=org',
                                       'before', ${before}, 'after', ${state},
                                       'patch', jsonb_build_array(jsonb_build_object('op', 'replace',
                                         'path', '/title/0', 'value', 'Title ' || v)),
                                       'attributes', jsonb_build_array('title'),
                                       'redacted', '[]'::jsonb) END AS data) AS t`,
        [v],
      );
    }
    await pool.query("VACUUM ANALYZE events");
    await pool.query("CHECKPOINT");
    const total = (await pool.query("SELECT count(*)::int AS n FROM events")).rows[0].n as number;

    const rawRead = async () => {
      let after = 0;
      for (;;) {
        const page = await pool.query(
          "SELECT * FROM events WHERE position > $1 ORDER BY position LIMIT $2",
          [after, PAGE],
        );
        if (page.rows.length === 0) break;
        after = page.rows.at(-1).position;
      }
    };
    const copy = entriesProjection as AnyProjection;
    const batches: AnyProjection = { ...copy, replay: undefined };
    const passes = [
      rawRead,
      profiled("batches", () => replayProjection({ pool, projection: batches, batchSize: 2000 })),
      profiled("copy", () => replayProjection({ pool, projection: copy, batchSize: 2000 })),
    ];
    const seconds = passes.map(() => 0);
    for (let turn = 0; turn < TURNS; turn++) {
      for (const [i, pass] of passes.entries()) seconds[i]! += await time(pass);
    }
    const [raw, byBatch, byCopy] = seconds as [number, number, number];
    const rate = (s: number) => (total * TURNS) / s;
    const row = (what: string, s: number) =>
      `| ${what} | ${fmt(rate(s))} | ${fmt(s / TURNS, 1)} | ${fmt(rate(s) / rate(raw), 2)} |`;
    const markdown = `## Replay of the entries projection${ENTRIES === 20_000 ? "" : `, ${fmt(ENTRIES)} entries`}

Command: \`npm run bench -- replay${sizeOption()}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}

A rebuild of \`entries\` (the log replayed into a new schema, its readers' indexes built, the
schema swapped in) against reading the same log, ${fmt(total)} events: ${fmt(ENTRIES)} entries'
first snapshots, then ${CHANGES} rounds of a modification of every entry (EntryModified with
both states, 9 user attributes). Events per second; the ratio is to the raw read (\`SELECT *
… ORDER BY position\`, pages of ${fmt(PAGE)}), measured in the same run; the three take turns by
whole passes, ${TURNS} each.

| pass | events/s | seconds a pass | ratio to the raw read |
|---|---:|---:|---:|
${row("raw read of the log", raw)}
${row("rebuild, batch by batch through `apply` (before 2026-12-07)", byBatch)}
${row("rebuild, folded and written by COPY (`Projection.replay`)", byCopy)}`;
    if (!PROFILE_DIR) recordResults(ENTRIES === 20_000 ? "replay" : `replay-${ENTRIES}`, markdown);
    process.stdout.write(`${markdown}\n`);
  } finally {
    await db.close();
  }
}
