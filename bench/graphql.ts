import os from "node:os";
import { readFileSync } from "node:fs";
import { once } from "node:events";
import { performance } from "node:perf_hooks";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import Fastify, { type FastifyBaseLogger } from "fastify";
import { Client } from "ldapts";
import { sampleLdif } from "../src/demo/index.ts";
import { SLAPD_BASE } from "../src/slapd/index.ts";
import { createToken } from "../src/auth/index.ts";
import { parseConfig } from "../src/config/index.ts";
import { createDirectoryClient, type DirectoryClient } from "../src/directory/index.ts";
import { buildGateway, graphqlPlugin } from "../src/graphql/index.ts";
import { createPool } from "../src/db/index.ts";
import { createLogger } from "../src/logger.ts";
import { EventStore } from "../src/store/index.ts";
import { startSlapd } from "../test/support/slapd.ts";
import {
  benchDatabase,
  benchSize,
  type BenchDatabase,
  cpuMs,
  machineCpuMs,
  restOfMachineMs,
  fmt,
  machine,
  percentile,
  profiled,
  recordResults,
  sampleDirectory,
  sizeOption,
} from "./support.ts";
import { createAuthentication } from "../src/auth/index.ts";
import { BUILT_IN_REDACTED_ATTRIBUTES } from "../src/config/index.ts";
import { loadDirectorySchema } from "../src/directory/index.ts";
import { NameSet } from "../src/events/index.ts";
import { createNormalizer, ensureImported } from "../src/capture/index.ts";
import { missingReaderIndexes, readerIndexesOf } from "../src/projector/reader-indexes.ts";
import { Projector, schemaNames, waitForProjection } from "../src/projector/index.ts";
import { allProjections } from "../projections/index.ts";
import {
  createPostgraphileViews,
  POSTGRAPHILE_QUERY,
  startPostgraphile,
  type GroupNames,
} from "./postgraphile.ts";

const REQUESTS = 300;
const WARMUP = 30;
const CONCURRENCY = 4;
const PEOPLE = `ou=people,${SLAPD_BASE}`;
const SELECTION = `{ people(first: 100) { nodes { uid displayName mail title telephoneNumbers groups { cn } } } }`;
const QUERY = SELECTION;
/** The same request `@at` a moment (`--reads projection`): from the versions valid then. */
const atQuery = (moment: Date) => `query @at(moment: "${moment.toISOString()}") ${SELECTION}`;
/** The projections the gateway reads: the entries, and the versions for `@at`. */
const READ_PROJECTIONS = new Set(["entries", "entry_versions"]);
const ATTRIBUTES = ["uid", "displayName", "mail", "title", "telephoneNumber"];
/** PostGraphile's version, as installed (a devDependency, pinned in the lockfile). */
const POSTGRAPHILE_VERSION = (
  JSON.parse(
    readFileSync(new URL("../node_modules/postgraphile/package.json", import.meta.url), "utf8"),
  ) as { version: string }
).version;
/** What the PostGraphile baseline reads (bench/postgraphile.ts). */
const POSTGRAPHILE_NOTE = `

The second baseline is PostGraphile ${POSTGRAPHILE_VERSION} (grafast, its amber preset, in a worker thread of its
own as annal's server, no authentication) over views of the same projection tables annal reads,
in a schema of their own (bench/postgraphile.ts): \`people\` (the \`user\` entries, the five fields
read from their stored attributes), \`groups\` (the \`group\` entries, \`cn\` from theirs) and a
person's \`groups\`, a function finding the groups whose \`member\` holds the person's DN in
\`entry_values\` (the index annal's gateway uses), answering
\`${POSTGRAPHILE_QUERY}\`. Each read of a group's stored attributes decompresses the whole row,
its members with it: the second PostGraphile row reads a group's \`cn\` from its DN's first
RDN instead (as every group of the sample is named), PostGraphile without the cost of those rows.`;

interface Run {
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
}

/** `count` calls of `once`, `CONCURRENCY` at a time; latency in ms. */
async function measure(count: number, once: (worker: number) => Promise<void>): Promise<Run> {
  const latencies: number[] = [];
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, worker) => {
      while (next < count) {
        next++;
        const begin = process.hrtime.bigint();
        await once(worker);
        latencies.push(Number(process.hrtime.bigint() - begin) / 1e6);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  latencies.sort((a, b) => a - b);
  return {
    perSecond: count / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
  };
}

/** Counts search pages and base reads: the LDAP round trips. */
function counted(directory: DirectoryClient): { client: DirectoryClient; trips: () => number } {
  let trips = 0;
  const client = new Proxy(directory, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (property === "search") {
        return async function* (...args: Parameters<DirectoryClient["search"]>) {
          for await (const page of target.search(...args)) {
            trips++;
            yield page;
          }
        };
      }
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (property === "get") trips++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { client, trips: () => trips };
}

/** People in the directory: the demo's 300 unless `--size` says (`--size 1m`). */
const SIZE = benchSize(0);

/**
 * Where the gateway reads: `--reads projection` imports the directory into the log and reads
 * the `entries` projection (`[graphql] reads = "projection"`); the default reads the directory.
 */
const READS: "projection" | "directory" = process.argv.includes("--reads")
  ? process.argv[process.argv.indexOf("--reads") + 1] === "projection"
    ? "projection"
    : "directory"
  : "directory";

/**
 * The directory's entries imported into the log as the first start imports them, and the
 * projections brought up to date: what the gateway reads with `--reads projection`.
 */
async function importDirectory(
  database: BenchDatabase,
  slapd: { url: string; bindDN: string; password: string },
) {
  const directory = createDirectoryClient({ ...slapd, poolSize: 2 });
  const quiet = { info() {}, warn() {}, error() {}, debug() {} };
  try {
    const store = await EventStore.open(database.pool);
    const schema = await loadDirectorySchema(directory);
    // As the first start imports: the entries, then capture's checkpoint, without which the
    // gateway holds the projection incomplete and reads the directory.
    await ensureImported(
      {
        pool: database.pool,
        store,
        directory,
        normalizer: createNormalizer(schema, {
          types: [
            { name: "user", base: PEOPLE, filter: "(objectClass=inetOrgPerson)" },
            {
              name: "group",
              base: `ou=groups,${SLAPD_BASE}`,
              filter: "(objectClass=groupOfNames)",
            },
          ],
          capture: {
            source: "accesslog",
            interval: 2000,
            reconcileInterval: 600_000,
            snapshotInterval: 0,
            redact: [...BUILT_IN_REDACTED_ATTRIBUTES],
          },
        }),
        base: SLAPD_BASE,
        log: quiet,
      },
      "accesslog",
      // One writer: the log keeps the directory's order of its entries.
      { writers: 1 },
    );
    const projector = await Projector.start({
      pool: database.pool,
      projections: allProjections.filter((projection) => READ_PROJECTIONS.has(projection.name)),
      log: createLogger("silent"),
    });
    const head = await store.head();
    for (const name of READ_PROJECTIONS)
      await waitForProjection(database.pool, name, head, 3_600_000);
    // A first start of 5,000 entries or more builds the readers' indexes after its load, while
    // the projections serve: the requests are measured once they are built.
    for (const projection of allProjections.filter(({ name }) => READ_PROJECTIONS.has(name))) {
      const schema = schemaNames(projection.name).live;
      const indexes = readerIndexesOf(projection, schema) ?? [];
      for (;;) {
        const { missing, invalid } = await missingReaderIndexes(database.pool, schema, indexes);
        if (missing.length === 0 && invalid.length === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
    await projector.stop();
    // The planner's statistics of what was loaded, as autovacuum gathers them within a minute
    // or so of a load (the run may start sooner): without them the `@at` people page is
    // planned blind, as a nested loop that reads the index of types again for each entry
    // (0.9 s at 2,000 people, against 2 ms with them).
    for (const name of READ_PROJECTIONS) {
      const tables = await database.pool.query<{ name: string }>(
        "SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname = $1",
        [schemaNames(name).live],
      );
      for (const table of tables.rows) await database.pool.query(`ANALYZE ${table.name}`);
    }
  } finally {
    await directory.close();
  }
}

/** The private slapd the requests read: the demo organisation, or one of `SIZE` people. */
async function benchSlapd() {
  if (SIZE === 0) return startSlapd({ seedLdif: sampleLdif() });
  const sample = await sampleDirectory("graphql", SIZE);
  return { ...sample, stop: () => sample.close() };
}

const ROLE = "graphql-server";

interface ServerData {
  readonly role: typeof ROLE;
  readonly database: string;
  readonly reads: "projection" | "directory";
  readonly slapd: { readonly url: string; readonly bindDN: string; readonly password: string };
}

/** What the main thread asks the server's thread; each is answered with one message. */
type Ask =
  "trips" | "statements" | "busy" | "measure" | "measured" | "resolvers" | "compiled" | "stop";

/**
 * The worker thread: annal's GraphQL gateway and nothing else, as in a process of its own,
 * so that the HTTP client's work (sending, parsing 100 people a response) does not take the
 * server's turns. Answers the main thread's questions: LDAP round trips so far, its event
 * loop's busy milliseconds so far; with --profile, its CPU profile of the measured requests.
 */
async function serve(data: ServerData): Promise<void> {
  const pool = createPool(data.database, 10);
  // SQL round trips: every statement the server's pool runs (authentication, read state, reads).
  let statements = 0;
  const query = pool.query.bind(pool);
  pool.query = ((...args: Parameters<typeof query>) => {
    statements++;
    return query(...args);
  }) as typeof pool.query;
  const directory = createDirectoryClient({ ...data.slapd, poolSize: 4 });
  const server = Fastify({ loggerInstance: createLogger("silent") as FastifyBaseLogger });
  const config = parseConfig(
    `[log]\nlevel = "silent"\n[directory]\nurl = "${data.slapd.url}"\nbindDN = "${data.slapd.bindDN}"\npassword = "\${P}"\nbase = "${SLAPD_BASE}"\n[graphql]\nreads = "${data.reads}"\ncompile = true\nschema = ["ops/demo/gateway/*.graphql"]\n[graphql.types.Person]\nbase = "${PEOPLE}"\n[[graphql.rest]]\nname = "annal"\nbase = "http://127.0.0.1:4173"\n`,
    { path: "bench.toml", env: { P: data.slapd.password }, cwd: process.cwd() },
  );
  const store = await EventStore.open(pool);
  const { token } = await createToken(pool, store, { name: "bench", access: ["read"] });
  if (data.reads === "projection") {
    // The token's events follow the import: the entries projection passes them too, or the
    // gateway holds it behind the log's head and reads the directory.
    const projector = await Projector.start({
      pool,
      projections: allProjections.filter((projection) => READ_PROJECTIONS.has(projection.name)),
      log: createLogger("silent"),
    });
    const head = await store.head();
    for (const name of READ_PROJECTIONS) await waitForProjection(pool, name, head, 600_000);
    await projector.stop();
  }
  const { client, trips } = counted(directory);
  const projection =
    data.reads === "projection"
      ? {
          db: pool,
          base: SLAPD_BASE,
          schema: await loadDirectorySchema(directory),
          redacted: new NameSet(BUILT_IN_REDACTED_ATTRIBUTES),
        }
      : undefined;
  await server.register(
    graphqlPlugin({
      pool,
      authentication: createAuthentication({ pool }),
      directory: client,
      config,
      log: createLogger("silent"),
      gateway: await buildGateway(config),
      ...(projection ? { projection } : {}),
    }),
  );
  const url = `${await server.listen({ host: "127.0.0.1", port: 0 })}/graphql`;
  const port = parentPort!;
  port.postMessage({ url, token });
  for (;;) {
    const [ask] = (await once(port, "message")) as [Ask];
    if (ask === "trips") port.postMessage(trips());
    else if (ask === "statements") port.postMessage(statements);
    else if (ask === "busy") port.postMessage(performance.eventLoopUtilization().active);
    else if (ask === "resolvers" || ask === "compiled") {
      // `[graphql] compile`, read by each request: the same server with and without it.
      (config.graphql as { compile: boolean }).compile = ask === "compiled";
      port.postMessage(true);
    } else if (ask === "measure") {
      // Profiled with --profile until the main thread says the measured requests are done.
      const done = once(port, "message").then(() => {});
      const profiling = profiled("graphql", () => done);
      port.postMessage(true);
      await profiling;
      port.postMessage(true);
    } else if (ask === "stop") break;
  }
  await server.close();
  await directory.close();
  await pool.end();
  port.postMessage(true);
}

/** Starts the server's thread; `ask` posts a question and waits for its answer. */
async function startServer(data: Omit<ServerData, "role">) {
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { role: ROLE, ...data } satisfies ServerData,
    argv: process.argv.slice(2), // --profile
    // As `annal start` runs (src/cli/mode.ts): graphql-js, loaded anew in this thread, in its
    // production mode.
    env: { ...process.env, NODE_ENV: process.env.NODE_ENV ?? "production" },
  });
  const [ready] = (await once(worker, "message")) as [{ url: string; token: string }];
  const ask = async <T>(question: Ask): Promise<T> => {
    const answer = once(worker, "message");
    worker.postMessage(question);
    return ((await answer) as [T])[0];
  };
  return {
    ...ready,
    ask,
    async stop() {
      await ask("stop");
      await worker.terminate();
    },
  };
}

export async function graphqlBenchmark(): Promise<void> {
  const slapd = await benchSlapd();
  const db = await benchDatabase();
  const raw = await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const client = new Client({ url: slapd.url });
      await client.bind(slapd.bindDN, slapd.password);
      return client;
    }),
  );
  if (READS === "projection") await importDirectory(db, slapd);
  const server = await startServer({
    database: db.url,
    reads: READS,
    slapd: { url: slapd.url, bindDN: slapd.bindDN, password: slapd.password },
  });
  try {
    const { url, token } = server;
    const headers = { "content-type": "application/json", authorization: `Bearer ${token}` };
    const request = async (query = QUERY) => {
      const body = JSON.stringify({ query });
      const response = await fetch(url, { method: "POST", headers, body });
      const json = (await response.json()) as {
        errors?: unknown;
        data?: { people: { nodes: unknown[] } };
      };
      if (json.errors || json.data?.people.nodes.length !== 100)
        throw new Error(`bad answer: ${JSON.stringify(json).slice(0, 300)}`);
    };
    const rawSearch = async (worker: number) => {
      const pages = raw[worker]!.searchPaginated(PEOPLE, {
        scope: "sub",
        filter: "(objectClass=inetOrgPerson)",
        attributes: ATTRIBUTES,
        sizeLimit: 100,
        paged: { pageSize: 100 },
      });
      let entries = 0;
      for await (const page of pages) entries += page.searchEntries.length;
      if (entries !== 100) throw new Error(`raw search read ${entries}`);
    };

    await measure(WARMUP, () => request());
    await measure(WARMUP, rawSearch);
    const before = await server.ask<number>("trips");
    const statementsBefore = await server.ask<number>("statements");
    const busyBefore = await server.ask<number>("busy");
    await server.ask("measure");
    const cpuBefore = { node: cpuMs(), slapd: cpuMs(slapd.pid), machine: machineCpuMs() };
    const annal = await measure(REQUESTS, () => request());
    const cpuAnnal = cpuPerRequest(cpuBefore, slapd.pid);
    await server.ask("measured");
    const serverBusy = ((await server.ask<number>("busy")) - busyBefore) / REQUESTS;
    const roundTrips = ((await server.ask<number>("trips")) - before) / REQUESTS;
    const sqlStatements = ((await server.ask<number>("statements")) - statementsBefore) / REQUESTS;
    const cpuBeforeRaw = { node: cpuMs(), slapd: cpuMs(slapd.pid), machine: machineCpuMs() };
    const baseline = await measure(REQUESTS, rawSearch);
    const cpuRaw = cpuPerRequest(cpuBeforeRaw, slapd.pid);
    // The same request through the resolvers (`[graphql] compile = false`), on the same
    // server: what compiling to SQL changed, within one run.
    let resolvers:
      | { run: Run; cpu: ReturnType<typeof cpuPerRequest>; busy: number; statements: number }
      | undefined;
    if (READS === "projection") {
      await server.ask("resolvers");
      await measure(WARMUP, () => request());
      const busy = await server.ask<number>("busy");
      const statements = await server.ask<number>("statements");
      const cpuBeforeResolvers = {
        node: cpuMs(),
        slapd: cpuMs(slapd.pid),
        machine: machineCpuMs(),
      };
      const run = await measure(REQUESTS, () => request());
      resolvers = {
        run,
        cpu: cpuPerRequest(cpuBeforeResolvers, slapd.pid),
        busy: ((await server.ask<number>("busy")) - busy) / REQUESTS,
        statements: ((await server.ask<number>("statements")) - statements) / REQUESTS,
      };
      await server.ask("compiled");
    }
    // The same request as the directory was at a moment (now, after the import: the same
    // people and groups), from the versions valid then.
    let at:
      | { run: Run; cpu: ReturnType<typeof cpuPerRequest>; busy: number; statements: number }
      | undefined;
    if (READS === "projection") {
      const query = atQuery(new Date());
      await measure(WARMUP, () => request(query));
      const busy = await server.ask<number>("busy");
      const statements = await server.ask<number>("statements");
      const cpuBeforeAt = { node: cpuMs(), slapd: cpuMs(slapd.pid), machine: machineCpuMs() };
      const run = await measure(REQUESTS, () => request(query));
      at = {
        run,
        cpu: cpuPerRequest(cpuBeforeAt, slapd.pid),
        busy: ((await server.ask<number>("busy")) - busy) / REQUESTS,
        statements: ((await server.ask<number>("statements")) - statements) / REQUESTS,
      };
    }
    // The second baseline (`--reads projection`): PostGraphile over the same projection
    // tables, answering the equivalent request (bench/postgraphile.ts); and the same with the
    // groups' cn read from their DNs, not their stored attributes.
    const postgraphileRuns = new Map<
      GroupNames,
      { run: Run; cpu: ReturnType<typeof cpuPerRequest>; busy: number; statements: number }
    >();
    for (const names of READS === "projection" ? (["attributes", "dn"] as const) : []) {
      await createPostgraphileViews(db.pool, names);
      const other = await startPostgraphile(db.url, names);
      try {
        const ask = async () => {
          const response = await fetch(other.url, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ query: POSTGRAPHILE_QUERY }),
          });
          const json = (await response.json()) as {
            errors?: unknown;
            data?: { allPeople: { nodes: Array<{ groupsList: Array<{ cn: unknown }> }> } };
          };
          const nodes = json.data?.allPeople.nodes;
          if (
            json.errors ||
            nodes?.length !== 100 ||
            !nodes.some((n) => n.groupsList.length > 0) ||
            nodes.some((n) => n.groupsList.some((g) => typeof g.cn !== "string"))
          )
            throw new Error(`bad PostGraphile answer: ${JSON.stringify(json).slice(0, 300)}`);
        };
        await measure(WARMUP, ask);
        const busy = await other.ask<number>("busy");
        const statements = await other.ask<number>("statements");
        const cpuBeforePg = { node: cpuMs(), slapd: cpuMs(slapd.pid), machine: machineCpuMs() };
        const run = await measure(REQUESTS, ask);
        postgraphileRuns.set(names, {
          run,
          cpu: cpuPerRequest(cpuBeforePg, slapd.pid),
          busy: ((await other.ask<number>("busy")) - busy) / REQUESTS,
          statements: ((await other.ask<number>("statements")) - statements) / REQUESTS,
        });
      } finally {
        await other.stop();
      }
    }
    const postgraphileRun = postgraphileRuns.get("attributes");
    const byDn = postgraphileRuns.get("dn");
    const pgRow = postgraphileRun
      ? `| baseline: PostGraphile ${POSTGRAPHILE_VERSION} over the projection tables | ${fmt(postgraphileRun.run.perSecond)} | ${fmt(postgraphileRun.run.p50, 1)} | ${fmt(postgraphileRun.run.p99, 1)} |
| ratio (annal / PostGraphile) | ${fmt(annal.perSecond / postgraphileRun.run.perSecond, 2)} | | |
${
  byDn
    ? `| baseline: PostGraphile, the groups' \`cn\` from their DNs | ${fmt(byDn.run.perSecond)} | ${fmt(byDn.run.p50, 1)} | ${fmt(byDn.run.p99, 1)} |
| ratio (annal / PostGraphile, \`cn\` from the DNs) | ${fmt(annal.perSecond / byDn.run.perSecond, 2)} | | |
`
    : ""
}`
      : "";
    const pgBusy = postgraphileRun
      ? `| baseline: PostGraphile over the projection tables | ${fmt(postgraphileRun.cpu.node, 2)} | ${fmt(postgraphileRun.busy, 2)} | ${fmt(postgraphileRun.cpu.slapd, 2)} | ${fmt(postgraphileRun.cpu.rest, 2)} | ${cores(postgraphileRun.cpu, postgraphileRun.run)} |
${
  byDn
    ? `| baseline: PostGraphile, the groups' \`cn\` from their DNs | ${fmt(byDn.cpu.node, 2)} | ${fmt(byDn.busy, 2)} | ${fmt(byDn.cpu.slapd, 2)} | ${fmt(byDn.cpu.rest, 2)} | ${cores(byDn.cpu, byDn.run)} |
`
    : ""
}`
      : "";
    const resolversRow = resolvers
      ? `| annal: the same request through the resolvers (\`[graphql] compile = false\`) | ${fmt(resolvers.run.perSecond)} | ${fmt(resolvers.run.p50, 1)} | ${fmt(resolvers.run.p99, 1)} |
| ratio (compiled / resolvers) | ${fmt(annal.perSecond / resolvers.run.perSecond, 2)} | | |
`
      : "";
    const resolversBusy = resolvers
      ? `| annal: through the resolvers (\`compile = false\`) | ${fmt(resolvers.cpu.node, 2)} | ${fmt(resolvers.busy, 2)} | ${fmt(resolvers.cpu.slapd, 2)} | ${fmt(resolvers.cpu.rest, 2)} | ${cores(resolvers.cpu, resolvers.run)} |
`
      : "";
    const atRow = at
      ? `| annal: the same request \`@at\` a moment | ${fmt(at.run.perSecond)} | ${fmt(at.run.p50, 1)} | ${fmt(at.run.p99, 1)} |
| ratio (\`@at\` / current) | ${fmt(at.run.perSecond / annal.perSecond, 2)} | | |
`
      : "";
    const atBusy = at
      ? `| annal: the same request \`@at\` a moment | ${fmt(at.cpu.node, 2)} | ${fmt(at.busy, 2)} | ${fmt(at.cpu.slapd, 2)} | ${fmt(at.cpu.rest, 2)} | ${cores(at.cpu, at.run)} |
`
      : "";

    recordResults(
      `graphql${READS === "projection" ? "-projection" : ""}${SIZE === 0 ? "" : `-${SIZE}`}`,
      `## GraphQL gateway${SIZE === 0 ? "" : `, ${fmt(SIZE)} people`}${READS === "projection" ? ", reading the projections" : ""}

Command: \`npm run bench -- graphql${sizeOption()}${READS === "projection" ? " --reads projection" : ""}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}; slapd from Debian (private, loopback)

One request resolves 100 people with 5 fields each (\`uid displayName mail title
telephoneNumbers\`) and each person's groups (\`groups { cn }\`, \`@ldapFindByAttribute\`), over
HTTP with a bearer token, ${CONCURRENCY} requests at a time, ${fmt(REQUESTS)} requests after
${WARMUP} to warm up. The server runs in a worker thread of its own (its own event loop, as in
a process of its own) and the HTTP client in the main thread. The baseline is one raw ldapts paged search of the same 100 people and
their 5 attributes (no groups, no HTTP, no GraphQL), ${CONCURRENCY} at a time on bound
connections, in the same run against the same slapd. The directory holds ${SIZE === 0 ? "the demo organisation (300 people)" : `${fmt(SIZE)} people of the demo's sample organisation, and their groups`}.

| | requests/s | p50 ms | p99 ms |
|---|---:|---:|---:|
| annal: \`POST /graphql\` | ${fmt(annal.perSecond)} | ${fmt(annal.p50, 1)} | ${fmt(annal.p99, 1)} |
| baseline: one ldapts paged search | ${fmt(baseline.perSecond)} | ${fmt(baseline.p50, 1)} | ${fmt(baseline.p99, 1)} |
| ratio (annal / baseline) | ${fmt(annal.perSecond / baseline.perSecond, 2)} | | |
${resolversRow}${pgRow}${atRow}
LDAP round trips per request: ${fmt(roundTrips, 1)} (search pages and base reads: the people in
one page, every person's groups in one batched search). SQL statements per request:
${fmt(sqlStatements, 1)}${resolvers ? ` (through the resolvers: ${fmt(resolvers.statements, 1)})` : ""}${at ? ` (\`@at\`: ${fmt(at.statements, 1)})` : ""} (the token, the read state, the searches)${postgraphileRun ? `; PostGraphile's: ${fmt(postgraphileRun.statements, 1)}` : ""}.${postgraphileRun ? POSTGRAPHILE_NOTE : ""}

Where a request's time goes, ms per request (2 cores): CPU of the benchmark's Node.js process
(annal's server and the HTTP client for annal's rows; the ldapts client alone for the
baseline's), the time the server's thread was busy (its event loop's active time), CPU of
slapd, and CPU of the rest of the machine (PostgreSQL, nothing else running); and how much
of the two cores the run kept busy (the CPU of a request times the requests a second).

| | Node.js process (CPU) | annal's server thread (busy) | slapd (CPU) | rest: PostgreSQL (CPU) | cores busy |
|---|---:|---:|---:|---:|---:|
| annal: \`POST /graphql\` | ${fmt(cpuAnnal.node, 2)} | ${fmt(serverBusy, 2)} | ${fmt(cpuAnnal.slapd, 2)} | ${fmt(cpuAnnal.rest, 2)} | ${cores(cpuAnnal, annal)} |
| baseline: one ldapts paged search | ${fmt(cpuRaw.node, 2)} | – | ${fmt(cpuRaw.slapd, 2)} | ${fmt(cpuRaw.rest, 2)} | ${cores(cpuRaw, baseline)} |
${resolversBusy}${pgBusy}${atBusy}
\`npm run bench -- graphql --profile\` writes a CPU profile of annal's requests.
`,
    );
    process.stderr.write(
      `bench: graphql ${fmt(annal.perSecond)} req/s (p99 ${fmt(annal.p99, 1)} ms), raw ${fmt(baseline.perSecond)}/s, ${fmt(roundTrips, 1)} round trips, ${fmt(sqlStatements, 1)} SQL statements${at ? `, @at ${fmt(at.run.perSecond)} req/s` : ""}\n`,
    );
  } finally {
    await server.stop();
    await Promise.all(raw.map((client) => client.unbind().catch(() => {})));
    await db.close();
    await slapd.stop();
  }
}

if (!isMainThread && (workerData as Partial<ServerData> | null)?.role === ROLE) {
  await serve(workerData as ServerData);
}

/** CPU ms a request of the run since `before` cost: this process, slapd, and the rest of the machine. */
function cpuPerRequest(
  before: { node: number; slapd: number; machine: number },
  slapdPid: number | undefined,
) {
  const node = cpuMs() - before.node;
  const slapd = cpuMs(slapdPid) - before.slapd;
  const rest = restOfMachineMs(before.machine, node + slapd);
  return { node: node / REQUESTS, slapd: slapd / REQUESTS, rest: rest / REQUESTS };
}

/** The share of the machine's cores a run kept busy, as `1.4 of 2`. */
function cores(cpu: { node: number; slapd: number; rest: number }, run: Run): string {
  const busy = ((cpu.node + cpu.slapd + cpu.rest) * run.perSecond) / 1000;
  return `${fmt(busy, 2)} of ${os.cpus().length}`;
}
