import { randomUUID } from "node:crypto";
import { replayProjection, type Projection, type ReplayPlan } from "../src/projector/index.ts";
import { EventStore, readAll, START, type LogPosition } from "../src/store/index.ts";
import {
  benchDatabase,
  benchSize,
  fmt,
  machine,
  recordResults,
  sizeOption,
  time,
} from "./support.ts";

const SINGLE = 2_000;
const BATCHES = 200;
const BATCH = 100;
/** Events in the log before the appends; `--size 1m` for 1,000,000. */
const LOG_SIZE = benchSize(200_000);
const LARGE = LOG_SIZE !== 200_000;
const PAGE = 1_000;
const READ_TURNS = 3;

/** The simplest useful projection: events per stream, written set-wise per batch. */
const counts: Projection<"Tick"> = {
  name: "bench_counts",
  version: 1,
  handles: ["Tick"],
  tables: (table) => [
    `CREATE TABLE ${table("counts")} (stream_id text PRIMARY KEY, n integer NOT NULL)`,
  ],
  async apply(events, { tx, table }) {
    await tx.query(
      `INSERT INTO ${table("counts")} AS c (stream_id, n)
       SELECT stream_id, count(*) FROM unnest($1::text[]) AS s(stream_id) GROUP BY stream_id
       ON CONFLICT (stream_id) DO UPDATE SET n = c.n + EXCLUDED.n`,
      [events.map((e) => e.streamId)],
    );
  },
};

/**
 * The same projection's set-wise replay (`Projection.replay`): each stream's count held in
 * memory, written by COPY (the first write straight into the new table, a later one merged by
 * adding to the stored count).
 */
const countsReplay: ReplayPlan<"Tick"> = {
  tables: [
    {
      name: "counts",
      columns: ["stream_id", "n"],
      key: ["stream_id"],
      merge: "n = t.n + EXCLUDED.n",
    },
  ],
  fold(events, rows) {
    for (const event of events) {
      const held = rows.get("counts", [event.streamId]);
      rows.put("counts", [event.streamId, ((held?.[1] as number | undefined) ?? 0) + 1]);
    }
  },
};

/** Runs `count` of each, in ten turns taken alternately; the seconds each took in all. */
async function alternate(
  count: number,
  baseline: (i: number) => Promise<void>,
  annal: (i: number) => Promise<void>,
): Promise<[number, number]> {
  const turns = 10;
  const seconds: [number, number] = [0, 0];
  for (let turn = 0; turn < turns; turn++) {
    const from = Math.floor((count * turn) / turns);
    const to = Math.floor((count * (turn + 1)) / turns);
    for (const [side, work] of [baseline, annal].entries()) {
      seconds[side]! += await time(async () => {
        for (let i = from; i < to; i++) await work(i);
      });
    }
  }
  return seconds;
}

export async function storeBenchmark(): Promise<void> {
  const db = await benchDatabase();
  const { pool } = db;
  try {
    const store = await EventStore.open(pool);
    await pool.query("CREATE TABLE raw_events (LIKE events INCLUDING ALL)");
    // The same event data on both sides: an object for annal, its JSON for the raw INSERT.
    const payload = { attribute: "mail", value: "someone@example.org" };
    const data = JSON.stringify(payload);
    const rawInsert = (rows: number, first: number, stream: string) => {
      const values: string[] = [];
      const params: unknown[] = [];
      for (let i = 0; i < rows; i++) {
        const p = params.length;
        values.push(`($${p + 1}, $${p + 2}, $${p + 3}, 'Tick', $${p + 4}, '{}', now())`);
        params.push(randomUUID(), stream, first + i, data);
      }
      return pool.query(
        `INSERT INTO raw_events (id, stream_id, stream_version, type, data, metadata, occurred_at) VALUES ${values.join(", ")}`,
        params,
      );
    };

    // The log to append to, read and replay, written in bulk; the raw table gets as many rows,
    // so that both sides append to indexes of the same size.
    for (const table of ["events", "raw_events"]) {
      await pool.query(
        `INSERT INTO ${table} (id, stream_id, stream_version, type, data, occurred_at)
         SELECT gen_random_uuid(), 'bulk-' || (g % 5000), g / 5000 + 1, 'Tick', $1::jsonb, now()
           FROM generate_series(0, $2 - 1) AS g`,
        [data, LOG_SIZE],
      );
      // At rest before the appends: the bulk rows vacuumed (an autovacuum of a million new
      // rows would otherwise run beside them) and the checkpoint behind them.
      await pool.query(`VACUUM ANALYZE ${table}`);
    }
    await pool.query("CHECKPOINT");

    // Single events, each in its own transaction, one writer; then batches of 100 events to
    // one stream. The baseline and annal take turns, a tenth of the work each time, so that a
    // change in the machine's speed during the run falls on both.
    const events = Array.from({ length: BATCH }, () => ({ type: "Tick", data: payload }));
    const [rawSingle, annalSingle] = await alternate(
      SINGLE,
      async (i) => {
        await rawInsert(1, Math.floor(i / 100) + 1, `raw-${i % 100}`);
      },
      async (i) => {
        await store.appendToStream(`single-${i % 100}`, [{ type: "Tick", data: payload }]);
      },
    );
    const [rawBatch, annalBatch] = await alternate(
      BATCHES,
      async (b) => {
        await rawInsert(BATCH, 1, `raw-batch-${b}`);
      },
      async (b) => {
        await store.appendToStream(`batch-${b}`, events);
      },
    );

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
    const annalRead = async () => {
      let after: LogPosition = START;
      for (;;) {
        const page = await readAll(pool, after, PAGE);
        const last = page.at(-1);
        if (!last) break;
        after = last;
      }
    };
    // The same replay with nothing to write: what the projector itself costs.
    const idle: Projection<"Tick"> = {
      ...counts,
      name: "bench_nothing",
      tables: () => [],
      apply: async () => {},
    };
    // Each a whole pass over the log, so they take turns by passes: READ_TURNS of each, the
    // seconds summed.
    const folded: Projection<"Tick"> = {
      ...counts,
      name: "bench_counts_copy",
      replay: countsReplay,
    };
    const reads = [
      rawRead,
      annalRead,
      () => replayProjection({ pool, projection: idle, batchSize: 2000 }),
      () => replayProjection({ pool, projection: counts, batchSize: 2000 }),
      () => replayProjection({ pool, projection: folded, batchSize: 2000 }),
    ];
    const readSeconds = reads.map(() => 0);
    for (let turn = 0; turn < READ_TURNS; turn++) {
      for (const [i, pass] of reads.entries()) readSeconds[i]! += await time(pass);
    }
    const [rawReads, annalReads, replayIdle, replayBatches, replay] = readSeconds as [
      number,
      number,
      number,
      number,
      number,
    ];
    const passes = total * READ_TURNS;

    const rate = (n: number, s: number) => n / s;
    const rows = [
      ["append, 1 event per transaction", SINGLE, annalSingle, rawSingle, "INSERT of one row"],
      [
        "append, batches of 100",
        BATCHES * BATCH,
        annalBatch,
        rawBatch,
        "multi-row INSERT of 100 rows",
      ],
      [
        "readAll, pages of 1,000",
        passes,
        annalReads,
        rawReads,
        "SELECT … ORDER BY position, pages of 1,000",
      ],
      [
        "replay of a projection that writes nothing",
        passes,
        replayIdle,
        rawReads,
        "reading the same events (raw pages)",
      ],
      [
        "replay of a simple projection, batch by batch (`apply`)",
        passes,
        replayBatches,
        rawReads,
        "reading the same events (raw pages)",
      ],
      [
        "replay of a simple projection",
        passes,
        replay,
        rawReads,
        "reading the same events (raw pages)",
      ],
    ] as const;
    const table = rows
      .map(
        ([what, n, ours, raw, baseline]) =>
          `| ${what} | ${fmt(rate(n, ours))} | ${fmt(rate(n, raw))} (${baseline}) | ${fmt(rate(n, ours) / rate(n, raw), 2)} |`,
      )
      .join("\n");
    const markdown = `## Event store${LARGE ? `, ${fmt(LOG_SIZE)} events` : ""}

Command: \`npm run bench -- store${sizeOption()}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}

Events per second (higher is better); the ratio is annal's rate divided by the baseline's, measured
in the same run on the same database. The raw baseline writes to a table of the same shape
(\`CREATE TABLE raw_events (LIKE events INCLUDING ALL)\`, same indexes and defaults). For the two
append rows the baseline and annal take turns, a tenth of the work at a time, so that the
machine's speed changing during the run moves both alike; the reading rows take turns by
whole passes over the log, ${READ_TURNS} passes each.

| operation | annal events/s | baseline events/s | ratio |
|---|---:|---:|---:|
${table}

The appends go to a log of ${fmt(LOG_SIZE)} events (the raw table holds as many rows). The
log read and replayed holds ${fmt(total)} events, ${fmt(LOG_SIZE)} of them in 5,000 streams. A
replay reads the log in pages of 2,000 events (the next read while one is applied) into a new
schema, which it swaps in. The simple projection counts each stream's events; its replay folds
them in memory and writes the counts by COPY (\`Projection.replay\`: one COPY into the new table
here, where fewer than 50,000 rows are held at the end; past that, COPY into a staging table and
one \`INSERT … ON CONFLICT\` a write). Batch by batch, the same projection applies each page
through \`apply\` (one \`INSERT … ON CONFLICT DO UPDATE\` a batch, one transaction each, not
waiting for the WAL flush), what every replay did before 2026-12-07. The projection that writes
nothing replays batch by batch too, so the difference between it and the batch-by-batch row
is the projection's own work.`;
    recordResults(LARGE ? `store-${LOG_SIZE}` : "store", markdown);
    process.stdout.write(`${markdown}\n`);
  } finally {
    await db.close();
  }
}
