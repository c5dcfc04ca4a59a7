/**
 * `npm run bench -- hooks`: signed webhook deliveries per second over loopback, against a bare
 * Fastify route that only answers 200, in the same run with the same client and requests.
 *
 * The servers run in a worker thread and the client in the main thread, so the two do not
 * share one event loop. Each annal delivery is a new change event: signature check, schema,
 * map, and one transaction that appends the event and queues its job (workers are not
 * started, so the processing does not compete for the CPU).
 */
import { once } from "node:events";
import http from "node:http";
import os from "node:os";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import Fastify from "fastify";
import { pino } from "pino";
import { z } from "zod";
import { createPool, type Pool } from "../src/db/index.ts";
import { defineHooks, hooksPlugin, resolveHooks, signDelivery } from "../src/hooks/index.ts";
import { http as webhooks } from "../src/hooks/index.ts";
import { startJobs } from "../src/jobs/index.ts";
import { EventStore } from "../src/store/index.ts";
import {
  benchDatabase,
  benchSize,
  cpuMs,
  fmt,
  machine,
  machineCpuMs,
  percentile,
  profiled,
  rateTheCoresAllow,
  recordResults,
  restOfMachineMs,
  sizeOption,
} from "./support.ts";
import { createAuthentication } from "../src/auth/index.ts";

/** Events in the log before the deliveries (`--size 1m`); none by default. */
const LOG_SIZE = benchSize(0);
const WARMUP = 500;
const DELIVERIES = 5_000;
const CONCURRENCY = 32;
const SECRET = "bench-secret-0123456789abcdef";
const ROLE = "annal-bench-hooks-server";

interface ServerData {
  readonly role: typeof ROLE;
  readonly mode: "annal" | "bare";
  readonly url: string;
}

const body = z.object({
  id: z.string(),
  kind: z.string(),
  at: z.iso.datetime({ offset: true }),
  employee: z.object({ uid: z.string(), title: z.string() }),
});

/** The worker thread: one server, `annal` (the webhook) or `bare`, until told to stop. */
async function serve(data: ServerData): Promise<void> {
  const log = pino({ level: "silent" });
  const app = Fastify();
  let close = async () => {};
  if (data.mode === "bare") {
    app.post("/bare", async () => ({ ok: true }));
  } else {
    const pool = createPool(data.url, 20);
    const store = await EventStore.open(pool);
    const jobs = await startJobs({ pool, log, supervise: false, schedule: false });
    const hooks = defineHooks({
      name: "bench",
      webhooks: {
        employees: webhooks.webhook({
          body,
          signature: { secrets: ["${BENCH_WEBHOOK_SECRET}"] },
          rateLimit: false,
          map: (b) => ({
            source: "bench",
            eventId: b.id,
            type: b.kind,
            subject: b.employee.uid,
            occurredAt: b.at,
            data: b.employee,
          }),
        }),
      },
      provider: { process: () => undefined },
    });
    const registry = resolveHooks([{ hooks }], { env: { BENCH_WEBHOOK_SECRET: SECRET } });
    await app.register(
      hooksPlugin({ registry, store, jobs, authentication: createAuthentication({ pool }) }),
    );
    close = async () => {
      await jobs.stop();
      await pool.end();
    };
  }
  const address = await app.listen({ host: "127.0.0.1", port: 0 });
  parentPort!.postMessage({ address });
  // The server's thread, profiled with --profile from here until it is told to stop.
  await profiled(`hooks-${data.mode}`, () => once(parentPort!, "message"));
  await app.close();
  await close();
  parentPort!.postMessage({ closed: true });
}

interface Delivery {
  readonly headers: Record<string, string>;
  readonly payload: string;
}

function deliveries(count: number, prefix: string): Delivery[] {
  const timestamp = String(Math.floor(Date.now() / 1000));
  return Array.from({ length: count }, (_, i) => {
    const payload = JSON.stringify({
      id: `${prefix}-${i}`,
      kind: "employee.updated",
      at: "2026-11-22T08:30:00Z",
      employee: { uid: `user${i % 500}`, title: `Title ${i}` },
    });
    const id = `msg_${prefix}_${i}`;
    return {
      payload,
      headers: {
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(payload)),
        "webhook-id": id,
        "webhook-timestamp": timestamp,
        "webhook-signature": signDelivery(SECRET, id, timestamp, payload),
      },
    };
  });
}

function post(agent: http.Agent, url: URL, delivery: Delivery): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      { method: "POST", agent, headers: delivery.headers },
      (response) => {
        response.resume();
        response.on("end", () => resolve(response.statusCode ?? 0));
      },
    );
    request.on("error", reject);
    request.end(delivery.payload);
  });
}

/** Sends every delivery with `CONCURRENCY` in flight; deliveries/s and latencies in ms. */
async function drive(url: URL, list: readonly Delivery[]) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const latencies: number[] = [];
  const statuses = new Map<number, number>();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < list.length) {
        const delivery = list[next++]!;
        const begin = performance.now();
        const status = await post(agent, url, delivery);
        latencies.push(performance.now() - begin);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    rate: list.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    statuses: Object.fromEntries(statuses),
  };
}

async function startServer(mode: ServerData["mode"], url: string) {
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { role: ROLE, mode, url } satisfies ServerData,
    argv: process.argv.slice(2), // --profile
  });
  const [message] = (await once(worker, "message")) as [{ address: string }];
  return {
    address: message.address,
    async stop() {
      worker.postMessage("stop");
      await once(worker, "message");
      await worker.terminate();
    },
  };
}

/**
 * \`size\` events in the log, in 5,000 streams, each with an idempotency key as a delivery's
 * event has one, so the deliveries' look-ups and appends meet indexes of that size.
 */
async function fillLog(pool: Pool, size: number): Promise<void> {
  process.stderr.write(`bench: hooks: writing ${fmt(size)} events to the log\n`);
  await pool.query(
    `INSERT INTO events (id, stream_id, stream_version, type, data, occurred_at, idempotency_key)
     SELECT gen_random_uuid(), 'bulk-' || (g % 5000), g / 5000 + 1, 'Tick', '{}', now(),
            'bulk:' || g
       FROM generate_series(0, $1 - 1) AS g`,
    [size],
  );
  await pool.query("VACUUM ANALYZE events");
  await pool.query("CHECKPOINT");
}

/** CPU ms of one delivery, and the rate at which the machine's cores would be all busy. */
const allowed = (cpu: { process: number; rest: number }) =>
  rateTheCoresAllow(cpu.process + cpu.rest);
const cpuRow = (name: string, cpu: { process: number; rest: number }) =>
  `| ${name} | ${fmt(cpu.process, 3)} | ${fmt(cpu.rest, 3)} | ${fmt(cpu.process + cpu.rest, 3)} | ${fmt(allowed(cpu))} |`;

async function measure(mode: ServerData["mode"], url: string, path: string, prefix: string) {
  const server = await startServer(mode, url);
  try {
    const target = new URL(path, server.address);
    await drive(target, deliveries(WARMUP, `${prefix}-warmup`));
    const list = deliveries(DELIVERIES, prefix);
    const before = { process: cpuMs(), machine: machineCpuMs() };
    const run = await drive(target, list);
    const processMs = cpuMs() - before.process;
    return {
      ...run,
      // CPU ms per delivery: this process (client and server threads), and the rest of the
      // machine (PostgreSQL, for the most part).
      cpu: {
        process: processMs / DELIVERIES,
        rest: restOfMachineMs(before.machine, processMs) / DELIVERIES,
      },
    };
  } finally {
    await server.stop();
  }
}

export async function hooksBenchmark(): Promise<void> {
  const db = await benchDatabase();
  try {
    if (LOG_SIZE > 0) await fillLog(db.pool, LOG_SIZE);
    const bare = await measure("bare", db.url, "/bare", "bare");
    const annal = await measure("annal", db.url, "/-hooks/bench/employees", "annal");
    const stored = await db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM events WHERE type = 'ChangeEventReceived'",
    );
    const jobs = await db.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'annal-change-events-by-subject'",
    );
    const expected = WARMUP + DELIVERIES;
    if (
      annal.statuses[202] !== DELIVERIES ||
      stored.rows[0]!.n !== expected ||
      jobs.rows[0]!.n !== expected
    ) {
      throw new Error(
        `the webhook did not take every delivery: ${JSON.stringify(annal.statuses)}, ${stored.rows[0]!.n} events, ${jobs.rows[0]!.n} jobs`,
      );
    }
    const date = new Date().toISOString().slice(0, 10);
    recordResults(
      LOG_SIZE > 0 ? `hooks-${LOG_SIZE}` : "hooks",
      `## Change-event webhook${LOG_SIZE > 0 ? `, ${fmt(LOG_SIZE)} events in the log` : ""}

Command: \`npm run bench -- hooks${sizeOption()}\` (run ${date})
Machine: ${machine()}

Signed deliveries over loopback HTTP/1.1 (keep-alive, ${CONCURRENCY} in flight, ${fmt(DELIVERIES)}
requests after ${fmt(WARMUP)} to warm up), server in a worker thread, client in the main thread.
Each annal delivery is a new change event of one source: Standard Webhooks signature check, zod
schema, map, then the \`ChangeEventReceived\` event and its pg-boss job committed (synchronous
commit) before the 202; deliveries that arrive while their source's transaction runs share the
next one (group commit). ${LOG_SIZE > 0 ? `The log holds ${fmt(LOG_SIZE)} events before the run (5,000 streams, each event with an idempotency key), vacuumed and checkpointed. ` : "The log is new. "}The baseline is a bare Fastify route that only answers 200, sent the
same requests by the same client in the same run. The machine is shared: load average
${os
  .loadavg()
  .map((n) => n.toFixed(1))
  .join(", ")} when the run ended.

| server | deliveries/s | p50 ms | p99 ms |
|---|---:|---:|---:|
| annal \`POST /-hooks/bench/employees\` | ${fmt(annal.rate)} | ${fmt(annal.p50, 1)} | ${fmt(annal.p99, 1)} |
| bare Fastify route (baseline) | ${fmt(bare.rate)} | ${fmt(bare.p50, 1)} | ${fmt(bare.p99, 1)} |
| ratio (annal / baseline) | ${fmt(annal.rate / bare.rate, 3)} | | |

All ${fmt(DELIVERIES)} measured deliveries were answered 202; the log holds one event and the
queue one job per delivery.

CPU ms per delivery, measured deliveries only: the benchmark's process (the server's thread and
the client's), and the rest of the machine (PostgreSQL, for the most part; /proc/stat).

| server | this process | rest of the machine | all | deliveries/s the cores allow |
|---|---:|---:|---:|---:|
${cpuRow("annal", annal.cpu)}
${cpuRow("bare Fastify route", bare.cpu)}

The last column is the rate the machine's ${os.cpus().length} cores would allow if that CPU spread over them
perfectly: annal's is ${fmt(allowed(annal.cpu) / bare.rate, 2)} of the baseline's measured rate.

\`npm run bench -- hooks --profile\` writes a CPU profile of each server's thread.`,
    );
    process.stderr.write(
      `hooks: annal ${fmt(annal.rate)}/s p99 ${fmt(annal.p99, 1)} ms; bare ${fmt(bare.rate)}/s p99 ${fmt(bare.p99, 1)} ms\n`,
    );
  } finally {
    await db.close();
  }
}

if (!isMainThread && (workerData as Partial<ServerData> | null)?.role === ROLE) {
  await serve(workerData as ServerData);
}
