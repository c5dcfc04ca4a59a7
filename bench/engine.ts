/**
 * `npm run bench -- engine-steps`: steps per second of chains of no-op steps, against the rate
 * of single-row INSERT transactions on the same database in the same run (one durable write a
 * step is the floor).
 *
 * `npm run bench -- engine-long [--size 1000]`: the cost of a step late in a long instance
 * against one early in it, each step its own wake (the case where a replay on every wake costs
 * most), with the sticky runs and without them.
 */
import type { Pool } from "../src/db/index.ts";
import { readStream } from "../src/store/index.ts";
import { startWorkflow } from "../src/workflow/index.ts";
import { benchActor, engineBench, until } from "./engine-setup.ts";
import {
  benchSize,
  cpuMs,
  fmt,
  machine,
  machineCpuMs,
  profiled,
  recordResults,
  restOfMachineMs,
  sizeOption,
  time,
} from "./support.ts";

const CHAINS = 20;
const STEPS = 100;
const CONCURRENCY = 8;

export async function engineStepsBenchmark(): Promise<void> {
  const bench = await engineBench("engine-steps");
  try {
    const pool = bench.db.pool;
    await pool.query("CREATE TABLE bench_rows (id bigserial PRIMARY KEY, chain int, step int)");
    const total = CHAINS * STEPS;
    // Baselines and engine take turns, the baselines twice, so that the machine's load moving
    // during the run moves both alike.
    // What each costs, summed over its turns: CPU of this process and of PostgreSQL (the rest
    // of the machine), PostgreSQL's write transactions and WAL.
    const costs = { serial: new Costs(), parallel: new Costs(), engine: new Costs() };
    const serial = [await costs.serial.of(pool, total, () => insertRate(pool, total, 1))];
    const parallel = [
      await costs.parallel.of(pool, total, () => insertRate(pool, total, CONCURRENCY)),
    ];
    await bench.engine({ concurrency: CONCURRENCY });
    const engine = [await costs.engine.of(pool, total, () => chainRate(bench.deps))];
    serial.push(await costs.serial.of(pool, total, () => insertRate(pool, total, 1)));
    parallel.push(await costs.parallel.of(pool, total, () => insertRate(pool, total, CONCURRENCY)));
    // The second turn with this process's CPU profile under --profile.
    engine.push(
      await costs.engine.of(pool, total, () =>
        profiled("engine-steps", () => chainRate(bench.deps)),
      ),
    );
    const logged = await eventsPerStep(pool, total * engine.length);
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const steps = mean(engine);
    const one = mean(serial);
    const eight = mean(parallel);
    const costRow = (what: string, c: Costs, rate: number) =>
      `| ${what} | ${fmt(c.perUnit.node, 2)} | ${fmt(c.perUnit.postgres, 2)} | ${fmt(c.perUnit.writes, 2)} | ${fmt(c.perUnit.wal)} | ${fmt(((c.perUnit.node + c.perUnit.postgres) * rate) / 1000, 2)} |`;
    recordResults(
      "engine-steps",
      `## Workflow engine: steps per second against single-row INSERTs

Command: \`npm run bench -- engine-steps\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}

${CHAINS} chains of ${STEPS} no-op steps at once (${fmt(total)} steps a turn, 2 turns), the
engine advancing ${CONCURRENCY} instances at a time: each step recorded (one \`StepScheduled\`,
carrying the step before's completion, in one append) before it runs. The baselines, taking turns
with the engine on the same database: ${fmt(total)} single-row \`INSERT\` transactions (synchronous
commit) into a table of their own, one at a time on one connection, and ${CONCURRENCY} at a time on
${CONCURRENCY} connections (the engine's concurrency).

| measure | rate (per second) | engine / this |
| --- | ---: | ---: |
| engine: steps | ${fmt(steps)} (turns: ${engine.map((r) => fmt(r)).join(", ")}) | |
| single-row INSERT transactions, 1 at a time | ${fmt(one)} | ${fmt(steps / one, 2)} |
| single-row INSERT transactions, ${CONCURRENCY} at a time | ${fmt(eight)} | ${fmt(steps / eight, 2)} |

CPU of the benchmark's process (the engine, and its polling for the end) per step: ${cpuMsPerStep.map((ms) => `${fmt(ms, 2)} ms`).join(", ")}
(the turns); at that cost one core alone allows ${fmt(1000 / mean(cpuMsPerStep))} steps a second.

What a step and an \`INSERT\` transaction cost, over all their turns: CPU of the benchmark's
Node.js process and of the rest of the machine (PostgreSQL: nothing else runs), ms; PostgreSQL's
write transactions (transaction ids taken) and WAL written, bytes; and the share of the two cores
the rate kept busy (the CPU of one times the rate).

| each | Node.js (CPU ms) | PostgreSQL (CPU ms) | write transactions | WAL (bytes) | cores busy |
| --- | ---: | ---: | ---: | ---: | ---: |
${costRow("engine: a step", costs.engine, steps)}
${costRow("`INSERT`, 1 at a time", costs.serial, one)}
${costRow(`\`INSERT\`, ${CONCURRENCY} at a time`, costs.parallel, eight)}

The instances' events: ${fmt(logged.events, 2)} a step, ${fmt(logged.json)} bytes of JSON (\`data\` and
\`metadata\` as text) a step, their starts and ends included.

\`npm run bench -- engine-steps --profile\` writes a CPU profile of the engine's second turn.
`,
    );
    process.stderr.write(
      `bench: engine-steps: ${fmt(steps)} steps/s; INSERTs ${fmt(one)}/s (1), ${fmt(eight)}/s (${CONCURRENCY})\n`,
    );
  } finally {
    await bench.close();
  }
}

/** Single-row INSERT transactions per second, `clients` connections each inserting in turn. */
async function insertRate(pool: Pool, total: number, clients: number): Promise<number> {
  let next = 0;
  const seconds = await time(() =>
    Promise.all(
      Array.from({ length: clients }, async (_, chain) => {
        while (next < total) {
          next++;
          await pool.query("INSERT INTO bench_rows (chain, step) VALUES ($1, $2)", [chain, next]);
        }
      }),
    ),
  );
  return total / seconds;
}

/** Steps per second of `CHAINS` chains started at once. */
async function chainRate(deps: Parameters<typeof startWorkflow>[0]): Promise<number> {
  const cpu = process.cpuUsage();
  const seconds = await time(async () => {
    const started = await Promise.all(
      Array.from({ length: CHAINS }, () =>
        startWorkflow(deps, { name: "chain", parameters: { steps: STEPS }, as: benchActor }),
      ),
    );
    const streams = started.map(({ instanceId }) => `workflow-${instanceId}`);
    await until(async () => (await completedOf(deps.pool, streams)) === CHAINS);
  });
  const used = process.cpuUsage(cpu);
  cpuMsPerStep.push((used.user + used.system) / 1000 / (CHAINS * STEPS));
  return (CHAINS * STEPS) / seconds;
}

/**
 * How many of `streams` end in `WorkflowCompleted`: each stream's last event, found by its
 * index (a count of the log's `WorkflowCompleted` events, every 5 ms, scanned the whole log
 * and its PostgreSQL CPU counted as the engine's).
 */
async function completedOf(pool: Pool, streams: readonly string[]): Promise<number> {
  const result = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM streams AS s
       JOIN events AS e ON e.stream_id = s.stream_id AND e.stream_version = s.version
      WHERE s.stream_id = ANY($1::text[]) AND e.type = 'WorkflowCompleted'`,
    [streams],
  );
  return result.rows[0]!.n;
}

/**
 * The events of the instances' streams and their JSON (`data` and `metadata` as text), bytes,
 * per step of `steps`.
 */
async function eventsPerStep(pool: Pool, steps: number): Promise<{ events: number; json: number }> {
  const { rows } = await pool.query<{ events: number; json: number }>(
    `SELECT count(*)::int AS events,
            coalesce(sum(octet_length(data::text) + octet_length(metadata::text)), 0)::int AS json
       FROM events
      WHERE stream_id LIKE 'workflow-%' AND stream_id NOT LIKE 'workflow-definition-%'`,
  );
  return { events: rows[0]!.events / steps, json: rows[0]!.json / steps };
}

/**
 * The cost of units of work (steps, INSERT transactions) summed over turns: CPU of this
 * process and of the rest of the machine (PostgreSQL), the transaction ids PostgreSQL handed
 * out (its write transactions; read from the snapshot, which takes none) and the WAL it wrote.
 */
class Costs {
  private units = 0;
  private sum = { node: 0, postgres: 0, writes: 0, wal: 0 };

  async of<T>(pool: Pool, units: number, work: () => Promise<T>): Promise<T> {
    const before = await Costs.position(pool);
    const node = cpuMs();
    const machineBefore = machineCpuMs();
    const result = await work();
    const nodeMs = cpuMs() - node;
    const postgresMs = restOfMachineMs(machineBefore, nodeMs);
    const after = await Costs.position(pool);
    this.units += units;
    this.sum.node += nodeMs;
    this.sum.postgres += postgresMs;
    this.sum.writes += after.xid - before.xid;
    this.sum.wal += Number(
      (
        await pool.query<{ bytes: string }>(`SELECT pg_wal_lsn_diff($1, $2)::text AS bytes`, [
          after.lsn,
          before.lsn,
        ])
      ).rows[0]!.bytes,
    );
    return result;
  }

  get perUnit() {
    const each = (n: number) => n / this.units;
    return {
      node: each(this.sum.node),
      postgres: each(this.sum.postgres),
      writes: each(this.sum.writes),
      wal: each(this.sum.wal),
    };
  }

  private static async position(pool: Pool): Promise<{ xid: number; lsn: string }> {
    const { rows } = await pool.query<{ xid: string; lsn: string }>(
      `SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS xid,
              pg_current_wal_insert_lsn()::text AS lsn`,
    );
    return { xid: Number(rows[0]!.xid), lsn: rows[0]!.lsn };
  }
}

/** CPU of this process (the engine, and the benchmark's polling) per step, each turn. */
const cpuMsPerStep: number[] = [];

export async function engineLongBenchmark(): Promise<void> {
  const steps = benchSize(1000);
  const bench = await engineBench("engine-long");
  try {
    // Each step its own wake (stepsPerAdvance 1), as when every step follows an answer.
    const sticky = await bench.engine({ concurrency: 1, stickyRuns: 1000, stepsPerAdvance: 1 });
    const kept = await longInstance(bench, steps);
    await sticky.stop();
    await bench.engine({ concurrency: 1, stickyRuns: 0, stepsPerAdvance: 1 });
    const replayed = await longInstance(bench, steps);
    const row = (name: string, r: LongFigures) =>
      `| ${name} | ${fmt(r.early, 2)} | ${fmt(r.late, 2)} | ${fmt(r.late / r.early, 2)} | ${fmt(r.seconds, 1)} |`;
    recordResults(
      `engine-long${sizeOption().replaceAll(" ", "")}`,
      `## Workflow engine: a step late in a long instance against one early

Command: \`npm run bench -- engine-long${sizeOption()}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}

One instance of ${fmt(steps)} no-op steps, each step its own wake (\`stepsPerAdvance\` 1: the
instance yields after every step and a pg-boss job wakes it again, as when each step follows an
answer). A step's cost is the time between its \`StepScheduled\` and the next one's (the
database's clock), the mean over 20 steps: around the 10th (steps 1 to 20) and at the end (the
last 20). With sticky runs the wake goes on with the parked code; without (\`stickyRuns\` 0,
as before them) every wake reads and folds the whole stream and replays every earlier call.

| engine | ms a step, steps 1–20 | ms a step, last 20 | late / early | whole instance (s) |
| --- | ---: | ---: | ---: | ---: |
${row("sticky runs (default)", kept)}
${row("no sticky runs: replay every wake", replayed)}
`,
    );
    process.stderr.write(
      `bench: engine-long: sticky ${fmt(kept.early, 2)} → ${fmt(kept.late, 2)} ms; replay ${fmt(replayed.early, 2)} → ${fmt(replayed.late, 2)} ms\n`,
    );
  } finally {
    await bench.close();
  }
}

interface LongFigures {
  readonly early: number;
  readonly late: number;
  readonly seconds: number;
}

async function longInstance(
  bench: Awaited<ReturnType<typeof engineBench>>,
  steps: number,
): Promise<LongFigures> {
  const { deps } = bench;
  const stream = { id: "" };
  const seconds = await time(async () => {
    const { instanceId } = await startWorkflow(deps, {
      name: "chain",
      parameters: { steps },
      as: benchActor,
    });
    stream.id = `workflow-${instanceId}`;
    await until(async () => {
      const done = await deps.pool.query(
        "SELECT 1 FROM events WHERE stream_id = $1 AND type = 'WorkflowCompleted'",
        [stream.id],
      );
      return (done.rowCount ?? 0) > 0;
    });
  });
  const events = await readStream(deps.pool, stream.id);
  const at = events
    .filter((event) => event.type === "StepScheduled")
    .map((event) => event.recordedAt.getTime());
  const gap = (from: number, to: number) => (at[to]! - at[from]!) / (to - from);
  return { early: gap(0, 20), late: gap(at.length - 21, at.length - 1), seconds };
}
