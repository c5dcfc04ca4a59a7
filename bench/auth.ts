/**
 * `npm run bench -- auth`: what authenticating a request costs. One route, answered three
 * ways in the same run by the same client: with no authentication, behind the one
 * authentication with a bearer token, and behind it with a `service_session` cookie (a
 * person whose principals are fresh, so the provider is not asked). The server runs in a
 * worker thread, the client in the main thread.
 */
import { once } from "node:events";
import http from "node:http";
import os from "node:os";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import Fastify from "fastify";
import {
  activateAccessConfiguration,
  callerOf,
  completeSignIn,
  createAuthentication,
  createToken,
} from "../src/auth/index.ts";
import { createPool } from "../src/db/index.ts";
import { EventStore } from "../src/store/index.ts";
import { benchDatabase, fmt, machine, percentile, recordResults } from "./support.ts";

const WARMUP = 500;
const REQUESTS = 5_000;
const CONCURRENCY = 32;
const ROLE = "annal-bench-auth-server";
const GROUP = "cn=bench,ou=groups,dc=example,dc=org";
const ORIGIN = "http://127.0.0.1";

/** The worker thread: the route three ways, until told to stop. */
async function serve(url: string): Promise<void> {
  const pool = createPool(url, 20);
  const store = await EventStore.open(pool);
  const authentication = createAuthentication({
    pool,
    people: {
      store,
      auth: {
        maxPrincipals: 7_000,
        principalsRefresh: 3_600_000,
        session: { idleTimeout: 3_600_000, absoluteTimeout: 3_600_000 },
      },
      sources: new Map(),
      publicOrigin: ORIGIN,
    },
  });
  const app = Fastify({ logger: false });
  const answer = { ok: true };
  app.get("/open/ping", async () => answer);
  await app.register(async (scope) => {
    scope.addHook("onRequest", authentication.require("read"));
    // The caller is read, as a route would; the answer is the same as the open route's.
    scope.get("/api/ping", async (request) => {
      callerOf(request);
      return answer;
    });
  });
  const address = await app.listen({ host: "127.0.0.1", port: 0 });
  parentPort!.postMessage({ address });
  parentPort!.once("message", () => {
    void app.close().then(() => pool.end());
  });
}

async function load(
  base: string,
  path: string,
  headers: Record<string, string>,
  count: number,
): Promise<{ perSecond: number; p50: number; p99: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const latencies: number[] = [];
  let next = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const started = process.hrtime.bigint();
      const request = http.get(`${base}${path}`, { agent, headers }, (response) => {
        response.resume();
        response.on("end", () => {
          if (response.statusCode !== 200) reject(new Error(`${path}: ${response.statusCode}`));
          latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
          resolve();
        });
      });
      request.on("error", reject);
    });
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        next++;
        await one();
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    perSecond: count / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

export async function authBenchmark(): Promise<void> {
  const database = await benchDatabase();
  try {
    const { pool } = database;
    const store = await EventStore.open(pool);
    await activateAccessConfiguration(pool, store, {
      grants: { read: [GROUP] },
      activate: { version: 1, by: "bench" },
    });
    const { token } = await createToken(pool, store, { name: "bench", access: ["read"] });
    // A person as a sign-in leaves them (no provider: the bench's principals stay fresh).
    const { cookie } = await completeSignIn(pool, store, {
      identity: { origin: "bench", subject: "bench-1", name: "bench", displayName: null, dn: null },
      principals: { principals: [GROUP], count: 1 },
      method: "ldap",
      address: undefined,
      policy: { idleTimeout: 3_600_000, absoluteTimeout: 3_600_000 },
      maxPrincipals: 7_000,
    });

    const worker = new Worker(new URL(import.meta.url), {
      workerData: { role: ROLE, url: database.url },
    });
    const [{ address }] = (await once(worker, "message")) as [{ address: string }];
    const modes: { name: string; path: string; headers: Record<string, string> }[] = [
      { name: "none (the same answer, no guard)", path: "/open/ping", headers: {} },
      { name: "bearer token", path: "/api/ping", headers: { authorization: `Bearer ${token}` } },
      {
        name: "session cookie",
        path: "/api/ping",
        headers: { cookie: `service_session=${cookie}`, origin: ORIGIN },
      },
    ];
    for (const mode of modes) await load(address, mode.path, mode.headers, WARMUP);
    const results = [];
    for (const mode of modes) {
      results.push({ ...mode, ...(await load(address, mode.path, mode.headers, REQUESTS)) });
    }
    worker.postMessage("stop");
    await once(worker, "exit");

    const none = results[0]!.perSecond;
    const rows = results.map(
      (r) =>
        `| ${r.name} | ${fmt(r.perSecond)} | ${fmt(r.p50, 2)} / ${fmt(r.p99, 2)} | ${fmt(r.perSecond / none, 2)} |`,
    );
    const date = new Date().toISOString().slice(0, 10);
    recordResults(
      "auth",
      `## Authentication

Command: \`npm run bench -- auth\` (run ${date})
Machine: ${machine()}; load average ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(", ")} when the run ended (the machine is shared)

Requests per second on one route (\`GET\`, a tiny JSON answer) over loopback HTTP/1.1 (keep-alive,
${CONCURRENCY} in flight, ${fmt(REQUESTS)} requests after ${WARMUP} to warm up), server in a worker thread,
client in the main thread, all three in the same run. The ratio is the rate divided by the rate
with no authentication. A bearer token costs one indexed lookup of its digest; a session costs
one lookup joining the session, the person and their principals (no call to the provider while
the principals are fresh); both read the active grants from a one-second cache.

| authenticated by | requests/s | latency p50 / p99 (ms) | ratio to none |
| --- | ---: | ---: | ---: |
${rows.join("\n")}
`,
    );
    for (const r of results) {
      process.stderr.write(`bench auth: ${r.name}: ${fmt(r.perSecond)}/s\n`);
    }
  } finally {
    await database.close();
  }
}

if (!isMainThread && (workerData as { role?: string })?.role === ROLE) {
  await serve((workerData as { url: string }).url);
}
