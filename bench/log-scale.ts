import type pg from "pg";
import type { Queryable } from "../src/db/index.ts";
import { newEventId } from "../src/store/append.ts";
import { copyEvents, type EventCopyRow } from "../src/store/copy-events.ts";
import {
  ensureEventPartitions,
  EventStore,
  logPositionColumns,
  logPositionOf,
  readAll,
  type LogPosition,
  type LogPositionRow,
} from "../src/store/index.ts";
import {
  benchDatabase,
  benchSize,
  fmt,
  machine,
  percentile,
  recordResults,
  sizeOption,
  time,
} from "./support.ts";

/**
 * `npm run bench -- log-scale --size 10m`: the event log as it grows. A generator fills the
 * log at COPY speed (`copyEvents`, the bulk path of an import) to each power of ten from
 * 100,000 up to `--size`, and at each of those sizes measures, on the same database:
 *
 * - append: `appendToStream` of one event to an existing stream, one at a time;
 * - `at`: a stream's last event at or before a moment (`occurred_at <= $2`), the log's own
 *   look-up of an entry as it was;
 * - feed page: `readAll` of 1,000 events after a cursor at a random place in the log.
 *
 * Flat rows from size to size mean that none of them pays for the log's length.
 */
const SIZE = benchSize(1_000_000);
/** Events of one stream: the generator makes streams of this many versions. */
const VERSIONS = 10;
/** Events per COPY (one transaction each). */
const BATCH = 50_000;
const SAMPLES = 1_000;
const PAGE = 1_000;
const START_MOMENT = Date.UTC(2020, 0, 1);
/** The generated log's clock: one event per 10 ms of `occurred_at`. */
const STEP_MS = 10;

interface Row {
  readonly events: number;
  readonly partitions: number;
  readonly copyPerSecond: number;
  readonly appendPerSecond: number;
  readonly appendP99: number;
  readonly atP50: number;
  readonly atP99: number;
  readonly pageP50: number;
  readonly pageP99: number;
  /** PostgreSQL's own planning and execution time (EXPLAIN ANALYZE), free of client scheduling. */
  readonly atServerP50: number;
  readonly pageServerP50: number;
}

/** Look-ups and pages also timed inside PostgreSQL, one in this many. */
const SERVER_EVERY = 10;

const AT_SQL = `SELECT e.position, e.data FROM events AS e
  WHERE e.stream_id = $1 AND e.occurred_at <= $2
  ORDER BY e.stream_version DESC LIMIT 1`;

/**
 * PostgreSQL's own time for one query, planning and execution, in milliseconds. On a machine
 * busy with other work, a client's round trip measures its wait for a core as much as the
 * query; this is the query.
 */
async function serverMs(pool: pg.Pool, text: string, values: unknown[]): Promise<number> {
  const result = await pool.query<{ "QUERY PLAN": [Record<string, number>] }>(
    `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`,
    values,
  );
  const plan = result.rows[0]!["QUERY PLAN"][0];
  return plan["Planning Time"]! + plan["Execution Time"]!;
}

/** The statement the store's `readAll` sends for a page after `after`, without running it. */
async function readAllStatement(after: LogPosition): Promise<{ text: string; values: unknown[] }> {
  let statement = { text: "", values: [] as unknown[] };
  const recorder = {
    query(config: { text: string; values: unknown[] }) {
      statement = config;
      return Promise.resolve({ rows: [] });
    },
  } as unknown as Queryable;
  await readAll(recorder, after, PAGE);
  return statement;
}

/** Generated event `n` (from 0): its stream and version, interleaved within each batch. */
function generated(n: number): { stream: number; version: number } {
  const batch = Math.floor(n / BATCH);
  const inBatch = n % BATCH;
  const streamsPerBatch = BATCH / VERSIONS;
  return {
    stream: batch * streamsPerBatch + (inBatch % streamsPerBatch),
    version: Math.floor(inBatch / streamsPerBatch) + 1,
  };
}

function checkpoints(size: number): number[] {
  const sizes: number[] = [];
  for (let n = 100_000; n <= size; n *= 10) sizes.push(n);
  if (sizes.at(-1) !== size) sizes.push(size);
  return sizes;
}

const ms = (seconds: number) => seconds * 1000;

export async function logScaleBenchmark(): Promise<void> {
  const db = await benchDatabase();
  const { pool } = db;
  const rows: Row[] = [];
  try {
    const store = await EventStore.open(pool);
    const data = JSON.stringify({ attribute: "mail", value: "someone@example.org", n: 0 });
    let filled = 0;
    for (const target of checkpoints(SIZE)) {
      process.stderr.write(`bench: log-scale: filling to ${fmt(target)} events\n`);
      const copySeconds = await time(async () => {
        while (filled < target) {
          const count = Math.min(BATCH, target - filled);
          await ensureEventPartitions(pool, filled + count);
          const batch: EventCopyRow[] = [];
          for (let i = 0; i < count; i++) {
            const { stream, version } = generated(filled + i);
            const moment = new Date(START_MOMENT + (filled + i) * STEP_MS);
            batch.push({
              id: newEventId(),
              streamId: `entry-${stream}`,
              version,
              type: "EntryModified",
              data,
              metadata: "{}",
              idempotencyKey: null,
              occurredAt: moment,
              recordedAt: moment,
            });
          }
          const client = await pool.connect();
          try {
            await client.query("BEGIN");
            await copyEvents(client, batch);
            await client.query("COMMIT");
          } finally {
            client.release();
          }
          filled += count;
        }
        // The streams' versions, as appends would have left them.
        await pool.query(
          `INSERT INTO streams (stream_id, version)
           SELECT stream_id, max(stream_version) FROM events GROUP BY stream_id
           ON CONFLICT (stream_id) DO UPDATE SET version = EXCLUDED.version`,
        );
        await pool.query("ANALYZE events");
      });
      const streams = Math.ceil(filled / VERSIONS);
      const randomStream = () => `entry-${Math.floor(Math.random() * streams)}`;

      const appends: number[] = [];
      const appendSeconds = await time(async () => {
        for (let i = 0; i < SAMPLES; i++) {
          const stream = randomStream();
          appends.push(
            ms(await time(() => store.appendToStream(stream, [{ type: "Tick", data: { i } }]))),
          );
        }
      });

      const at: number[] = [];
      const atServer: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const moment = new Date(START_MOMENT + Math.floor(Math.random() * filled) * STEP_MS);
        const stream = randomStream();
        at.push(ms(await time(() => pool.query(AT_SQL, [stream, moment]))));
        if (i % SERVER_EVERY === 0) atServer.push(await serverMs(pool, AT_SQL, [stream, moment]));
      }

      // Cursors at random places of the log, taken from the log itself.
      const pages: number[] = [];
      const pagesServer: number[] = [];
      for (let i = 0; i < SAMPLES / 10; i++) {
        const position = 1 + Math.floor(Math.random() * filled);
        const found = await pool.query<LogPositionRow>(
          `SELECT ${logPositionColumns("e")} FROM events AS e WHERE e.position = $1`,
          [position],
        );
        const row = found.rows[0];
        if (!row) continue;
        const after = logPositionOf(row);
        pages.push(ms(await time(() => store.readAll({ after, limit: PAGE }))));
        if (i % (SERVER_EVERY / 10) === 0) {
          const statement = await readAllStatement(after);
          pagesServer.push(await serverMs(pool, statement.text, statement.values));
        }
      }

      const partitions = await pool.query<{ n: string }>(
        "SELECT count(*)::text AS n FROM pg_inherits WHERE inhparent = 'events'::regclass",
      );
      const sorted = (values: number[]) => values.toSorted((a, b) => a - b);
      rows.push({
        events: filled,
        partitions: Number(partitions.rows[0]!.n),
        copyPerSecond: filled / copySeconds,
        appendPerSecond: SAMPLES / appendSeconds,
        appendP99: percentile(sorted(appends), 99),
        atP50: percentile(sorted(at), 50),
        atP99: percentile(sorted(at), 99),
        pageP50: percentile(sorted(pages), 50),
        pageP99: percentile(sorted(pages), 99),
        atServerP50: percentile(sorted(atServer), 50),
        pageServerP50: percentile(sorted(pagesServer), 50),
      });
      process.stderr.write(`bench: log-scale: ${JSON.stringify(rows.at(-1))}\n`);
    }
  } finally {
    await db.close();
  }
  recordResults(
    "log-scale",
    [
      "## The log at scale (`npm run bench -- log-scale" + sizeOption() + "`)",
      "",
      `Machine: ${machine()}. The log filled by COPY (${fmt(BATCH)} events a transaction,`,
      `streams of ${VERSIONS} versions), partitioned by position (docs/architecture.md, "The log`,
      `at scale"). At each size, ${fmt(SAMPLES)} appends of one event to a random stream, one at a`,
      `time; ${fmt(SAMPLES)} \`at\` look-ups (a random stream's last event at or before a random`,
      `moment); ${fmt(SAMPLES / 10)} feed pages of ${fmt(PAGE)} events (\`readAll\`) after a random`,
      'place in the log. Times in milliseconds; the two "in PostgreSQL" columns are the',
      `server's own planning and execution time (\`EXPLAIN ANALYZE\`) of one look-up in ${SERVER_EVERY}`,
      "and every feed page, free of the client's wait for a core on a busy machine.",
      "",
      "| events | partitions | fill (events/s) | appends/s | append p99 | `at` p50 | `at` p99 | `at` in PostgreSQL p50 | feed page p50 | feed page p99 | feed page in PostgreSQL p50 |",
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
      ...rows.map(
        (r) =>
          `| ${fmt(r.events)} | ${r.partitions} | ${fmt(r.copyPerSecond)} | ${fmt(r.appendPerSecond)} | ${fmt(r.appendP99, 2)} | ${fmt(r.atP50, 2)} | ${fmt(r.atP99, 2)} | ${fmt(r.atServerP50, 3)} | ${fmt(r.pageP50, 2)} | ${fmt(r.pageP99, 2)} | ${fmt(r.pageServerP50, 2)} |`,
      ),
    ].join("\n"),
  );
}
