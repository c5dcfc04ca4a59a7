import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { startEmbeddedPostgres } from "../src/db/index.ts";
import { benchSize, fmt, machine, recordResults } from "./support.ts";

/** `SELECT`s a turn, each way; a fifth as many `INSERT` transactions. */
const STATEMENTS = benchSize(5_000);
const TURNS = 6;
/** About the JSON of a workflow step's append (bench/RESULTS.md: 1,657 bytes of WAL a step). */
const ROW = JSON.stringify({ step: "x".repeat(1_400), at: new Date().toISOString() });

interface Cost {
  /** This process's CPU (user and system: the kernel's sends count), µs a statement. */
  cpuUs: number;
  /** Wall time, µs a statement. */
  wallUs: number;
}

/**
 * `npm run bench -- transport`: what a statement costs annal's process over the embedded
 * PostgreSQL's Unix socket against loopback TCP, on one server, one connection each way,
 * taking turns (a turn of each way, `TURNS` times) so that the machine's load moves both alike:
 * a `SELECT $1` round trip, and a single-row `INSERT` of a 1.4 KB JSON value in its own
 * transaction (BEGIN, INSERT, COMMIT), the shape of a workflow step's append.
 */
export async function transportBenchmark(): Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "annal-bench-transport-"));
  const server = await startEmbeddedPostgres({ dataDir: path.join(dir, "pg") });
  const ways = { socket: server.url, tcp: server.tcpUrl } as const;
  const clients = {
    socket: new pg.Client({ connectionString: ways.socket }),
    tcp: new pg.Client({ connectionString: ways.tcp }),
  };
  try {
    for (const client of Object.values(clients)) await client.connect();
    await clients.socket.query("CREATE TABLE bench_rows (id bigserial PRIMARY KEY, data jsonb)");
    const kinds = {
      "`SELECT $1`": {
        count: STATEMENTS,
        run: async (client: pg.Client, i: number) => {
          await client.query("SELECT $1::int AS n", [i]);
        },
      },
      "`BEGIN`, `INSERT` of one 1.4 KB JSON row, `COMMIT`": {
        count: Math.ceil(STATEMENTS / 5),
        run: async (client: pg.Client) => {
          await client.query("BEGIN");
          await client.query("INSERT INTO bench_rows (data) VALUES ($1)", [ROW]);
          await client.query("COMMIT");
        },
      },
      // After the inserts: the table holds their rows, 1.4 KB each.
      "`SELECT` of 1,000 rows of 1.4 KB (one page of a log read)": {
        count: Math.ceil(STATEMENTS / 50),
        run: async (client: pg.Client) => {
          await client.query("SELECT id, data FROM bench_rows ORDER BY id LIMIT 1000");
        },
      },
    };
    const rows: string[] = [];
    for (const [kind, { count, run }] of Object.entries(kinds)) {
      const totals = { socket: { cpuUs: 0, wallUs: 0 }, tcp: { cpuUs: 0, wallUs: 0 } };
      for (let turn = 0; turn < TURNS; turn++) {
        for (const way of turn % 2 === 0
          ? (["socket", "tcp"] as const)
          : (["tcp", "socket"] as const)) {
          const cost = await measure(count, (i) => run(clients[way], i));
          totals[way].cpuUs += cost.cpuUs / TURNS;
          totals[way].wallUs += cost.wallUs / TURNS;
        }
      }
      process.stderr.write(
        `bench: transport: ${kind}: socket ${fmt(totals.socket.cpuUs, 1)} µs CPU, ${fmt(totals.socket.wallUs, 1)} µs wall; tcp ${fmt(totals.tcp.cpuUs, 1)}, ${fmt(totals.tcp.wallUs, 1)}\n`,
      );
      rows.push(
        `| ${kind} | ${fmt(totals.tcp.cpuUs, 1)} | ${fmt(totals.socket.cpuUs, 1)} | ${fmt(totals.socket.cpuUs / totals.tcp.cpuUs, 2)} | ${fmt(totals.tcp.wallUs, 1)} | ${fmt(totals.socket.wallUs, 1)} | ${fmt(totals.socket.wallUs / totals.tcp.wallUs, 2)} |`,
      );
    }
    const load = os.loadavg().map((n) => fmt(n, 1));
    recordResults(
      "transport",
      `## PostgreSQL over its Unix socket against loopback TCP

Command: \`npm run bench -- transport\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}

One embedded PostgreSQL, one connection over its Unix socket (what annal uses since issue 54)
and one over loopback TCP (what it used before), ${TURNS} turns each way, taking turns:
${fmt(STATEMENTS)} \`SELECT\`s a turn, ${fmt(Math.ceil(STATEMENTS / 5))} \`INSERT\` transactions
(three statements each), ${fmt(Math.ceil(STATEMENTS / 50))} reads of 1,000 of the rows inserted. CPU is this process's (user and system: the
kernel's work to send and receive counts), µs a statement or transaction; wall time likewise.
Load average when the run ended: ${load.join(", ")}.

| each | TCP CPU µs | socket CPU µs | socket / TCP | TCP wall µs | socket wall µs | socket / TCP |
|---|---:|---:|---:|---:|---:|---:|
${rows.join("\n")}
`,
    );
  } finally {
    for (const client of Object.values(clients)) await client.end().catch(() => {});
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(count: number, run: (i: number) => Promise<void>): Promise<Cost> {
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await run(i);
  const wallUs = Number(process.hrtime.bigint() - start) / 1e3;
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / count, wallUs: wallUs / count };
}
