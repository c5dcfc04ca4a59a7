import http from "node:http";
import os from "node:os";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { pino } from "pino";
import { createToken } from "../src/auth/index.ts";
import { parseConfig } from "../src/config/index.ts";
import { createPool, type Pool } from "../src/db/index.ts";
import { parseSubschema } from "../src/directory/schema.ts";
import { parseFilter, checkAttributes } from "../src/filters/index.ts";
import { createServer } from "../src/http/index.ts";
import { Projector } from "../src/projector/index.ts";
import { AttributeCatalog } from "../src/rest/catalog.ts";
import { parseFields } from "../src/rest/fields.ts";
import { restPlugin } from "../src/rest/index.ts";
import type { Queryable } from "../src/db/index.ts";
import { schemaNames, tableIn } from "../src/projector/index.ts";
import { searchPage } from "../src/rest/search/page.ts";
import { SearchSql, type KeysetPosition } from "../src/rest/search/sql.ts";
import { parseSort } from "../src/rest/sort.ts";
import { EventStore } from "../src/store/index.ts";
import { allProjections } from "../projections/index.ts";
import {
  entriesProjection,
  indexEntryValues,
  withSortPairs,
} from "../projections/entries/index.ts";
import { buildReaderIndexes } from "../src/projector/reader-indexes.ts";
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
import { createAuthentication } from "../src/auth/index.ts";

/**
 * `npm run bench -- rest --size 1m` searches 1,000,000 entries instead; `--no-export` stops
 * after the searches (the export section seeds up to 1,000,000 entries: most of the run).
 */
const SEARCH_ENTRIES = benchSize(100_000);
/**
 * `--sort-pairs`: the type configured with `sortPairs = [["sn", "cn"]]` and the pair's index
 * built after seeding, so that `sn eq "Meyer"` by `sn,cn` reads one range of it.
 */
const SORT_PAIRS = process.argv.includes("--sort-pairs");
const SORT_PAIR = { type: "user", first: "sn", second: "cn" } as const;
const EXPORT_STEPS = [100_000, 300_000, 1_000_000];
/** Enough requests that a p99 is the tenth slowest, not one or two stray ones. */
const RUNS = 1000;
const WARMUP = 50;
const PEOPLE = "ou=people,dc=example,dc=org";
const ROLE = "annal-bench-rest-server";
const CLIENT_ROLE = "annal-bench-rest-client";
const STRING = "1.3.6.1.4.1.1466.115.121.1.15";

const schema = parseSubschema([
  "( 2.5.4.0 NAME 'objectClass' SYNTAX 1.3.6.1.4.1.1466.115.121.1.38 )",
  ...["cn", "sn", "givenName", "title", "description", "uid"].map(
    (name, i) => `( 9.9.9.${i} NAME '${name}' SYNTAX ${STRING} )`,
  ),
  "( 0.9.2342.19200300.100.1.3 NAME 'mail' SYNTAX 1.3.6.1.4.1.1466.115.121.1.26 )",
  "( 2.5.4.20 NAME 'telephoneNumber' SYNTAX 1.3.6.1.4.1.1466.115.121.1.50 )",
  "( 1.3.6.1.1.1.1.0 NAME 'uidNumber' SYNTAX 1.3.6.1.4.1.1466.115.121.1.27 SINGLE-VALUE )",
  "( 2.5.18.2 NAME 'modifyTimestamp' SYNTAX 1.3.6.1.4.1.1466.115.121.1.24 SINGLE-VALUE NO-USER-MODIFICATION USAGE directoryOperation )",
  "( 1.3.6.1.1.16.4 NAME 'entryUUID' SYNTAX 1.3.6.1.1.16.1 SINGLE-VALUE NO-USER-MODIFICATION USAGE directoryOperation )",
]);

const SURNAMES = [
  "Smith",
  "Meyer",
  "Schmidt",
  "Garcia",
  "Rossi",
  "Dubois",
  "Nowak",
  "Jensen",
  "Silva",
  "Kowalski",
  "Müller",
  "Novak",
  "Ivanova",
  "Tanaka",
  "Kim",
  "Nguyen",
  "Okafor",
  "Haddad",
  "Larsen",
  "Costa",
];
const GIVEN = [
  "Anna",
  "Ben",
  "Clara",
  "David",
  "Elif",
  "Farid",
  "Greta",
  "Hugo",
  "Ines",
  "Jonas",
  "Kira",
  "Luis",
  "Mona",
  "Nils",
  "Olga",
  "Paul",
  "Rosa",
  "Sami",
  "Tara",
  "Umar",
  "Vera",
  "Wim",
  "Yara",
  "Zoe",
  "Aiko",
];
const TITLES = [
  "Engineer",
  "Senior Engineer",
  "Manager",
  "Director",
  "Analyst",
  "Accountant",
  "Designer",
  "Recruiter",
  "Consultant",
  "Support Agent",
  "Architect",
  "Intern",
];

/**
 * Entries `from`..`to` of type user, straight into the `entries` projection (as capture would
 * leave them), indexed by the projection's own statements (`indexEntryValues`) as a batch of
 * the projector would index them.
 */
export async function seed(pool: Pool, from: number, to: number): Promise<void> {
  for (let start = from; start <= to; start += 100_000) {
    const end = Math.min(to, start + 99_999);
    const inserted = await pool.query<{ entry_uuid: string }>(
      `INSERT INTO projection_entries.entries
         (entry_uuid, type, dn, dn_norm, attributes, operational, created_at, modified_at, version, created_position, position, transaction_id)
       SELECT u, 'user', 'uid=user' || g || ',${PEOPLE}', 'uid=user' || g || ',${PEOPLE}',
              jsonb_build_object(
                'objectClass', '["top","person","organizationalPerson","inetOrgPerson"]'::jsonb,
                'uid', jsonb_build_array('user' || g),
                'cn', jsonb_build_array(given || ' ' || sn),
                'sn', jsonb_build_array(sn),
                'givenName', jsonb_build_array(given),
                'mail', jsonb_build_array('user' || g || '@example.org'),
                'title', jsonb_build_array(title),
                'telephoneNumber', jsonb_build_array('+49 30 ' || lpad(g::text, 7, '0')),
                'uidNumber', jsonb_build_array((10000 + g)::text),
                'description', jsonb_build_array('Member of staff since ' || (2000 + g % 25) || ', team ' || (g % 97))),
              jsonb_build_object('entryUUID', jsonb_build_array(u::text),
                                 'modifyTimestamp', '["20261101090000Z"]'::jsonb),
              now(), now(), 1, g, g, '1'::xid8
         FROM (SELECT g, gen_random_uuid() AS u,
                      ($3::text[])[1 + g % cardinality($3::text[])] AS sn,
                      ($4::text[])[1 + (g / 20) % cardinality($4::text[])] AS given,
                      ($5::text[])[1 + g % cardinality($5::text[])] AS title
                 FROM generate_series($1::int, $2::int) AS g) AS s
       RETURNING entry_uuid`,
      [start, end, SURNAMES, GIVEN, TITLES],
    );
    await indexEntryValues(
      pool,
      tableIn(schemaNames("entries").live),
      inserted.rows.map((row) => row.entry_uuid),
    );
  }
  await pool.query("VACUUM ANALYZE projection_entries.entries, projection_entries.entry_values");
  // The seeded pages written out now rather than by a checkpoint during the measured requests
  // (a server does not load a million entries just before it serves them). It needs the
  // superuser or pg_checkpoint, which a DATABASE_URL's user may lack.
  await pool.query("CHECKPOINT").catch((error: unknown) => {
    process.stderr.write(`bench: rest: no checkpoint after seeding: ${String(error)}\n`);
  });
}

/** A pool that notes the statements it runs, to explain them. */
function recording(pool: Pool): {
  db: Queryable;
  statements: { text: string; params: unknown[] }[];
} {
  const statements: { text: string; params: unknown[] }[] = [];
  const db = {
    query: (text: string, params: unknown[] = []) => {
      statements.push({ text, params });
      return pool.query(text, params);
    },
  } as unknown as Queryable;
  return { db, statements };
}

interface Timings {
  readonly p50: number;
  readonly p99: number;
}

async function measure(run: (i: number) => Promise<unknown>): Promise<Timings> {
  for (let i = 0; i < WARMUP; i++) await run(i);
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    await run(i);
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

/**
 * The HTTP client, in a worker thread of its own that does nothing else: in the main thread,
 * which seeds and runs the direct SQL, its requests met that thread's collections (5 to 20 ms
 * pauses, one in about 80 requests), and those were most of every case's p99.
 */
async function sendRequests(base: string, authorization: string): Promise<void> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (path: string) =>
    new Promise<void>((resolve, reject) => {
      http
        .get(`${base}${path}`, { agent, headers: { authorization } }, (response) => {
          response.resume();
          response.on("end", () =>
            response.statusCode === 200
              ? resolve()
              : reject(new Error(`${path}: ${response.statusCode}`)),
          );
        })
        .on("error", reject);
    });
  parentPort!.on("message", (message: { paths?: string[]; close?: true }) => {
    if (!message.paths) {
      agent.destroy();
      parentPort!.close();
      return;
    }
    void (async () => {
      const samples: number[] = [];
      for (const [i, path] of message.paths!.entries()) {
        const start = process.hrtime.bigint();
        await get(path);
        if (i >= WARMUP) samples.push(Number(process.hrtime.bigint() - start) / 1e6);
      }
      parentPort!.postMessage({ samples });
    })().catch((error: unknown) => parentPort!.postMessage({ error: String(error) }));
  });
  parentPort!.postMessage({ ready: true });
}

/** `measure` for a case's requests, sent by the client thread. */
async function measureOverHttp(client: Worker, path: (i: number) => string): Promise<Timings> {
  const paths = Array.from({ length: WARMUP + RUNS }, (_, i) => path(i));
  client.postMessage({ paths });
  const [answer] = (await once(client, "message")) as [{ samples?: number[]; error?: string }];
  if (!answer.samples) throw new Error(`bench: rest: client: ${answer.error}`);
  const samples = answer.samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

/** Streams a response to nowhere, sampling this process's resident memory as it goes. */
async function download(url: string, authorization: string) {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  let bytes = 0;
  const seconds = await time(async () => {
    const response = await fetch(url, { headers: { authorization } });
    if (response.status !== 200)
      throw new Error(`${url}: ${response.status} ${await response.text()}`);
    for await (const chunk of response.body!) bytes += (chunk as Uint8Array).length;
  });
  clearInterval(sampler);
  return { seconds, bytes, peakRss: Math.max(peak, process.memoryUsage().rss), before };
}

/** `COPY (query) TO STDOUT` through psql, its output read and dropped: the database's own export. */
async function copyBaseline(
  url: string,
  query: string,
): Promise<{ seconds: number; bytes: number } | undefined> {
  let bytes = 0;
  try {
    const seconds = await time(
      () =>
        new Promise<void>((resolve, reject) => {
          const psql = spawn("psql", [
            url,
            "-X",
            "-q",
            "-c",
            `COPY (${query}) TO STDOUT WITH (FORMAT csv)`,
          ]);
          psql.stdout.on("data", (chunk: Buffer) => (bytes += chunk.length));
          psql.on("error", reject);
          psql.on("exit", (code) =>
            code === 0 ? resolve() : reject(new Error(`psql exited ${code}`)),
          );
        }),
    );
    return { seconds, bytes };
  } catch {
    return undefined; // no psql here: the baseline is left out
  }
}

const mb = (bytes: number) => fmt(bytes / 2 ** 20);

/**
 * The server under test, in a worker thread of its own as in a deployment: the seeding and the
 * HTTP client of the benchmark's main thread do not pause its event loop or its collections.
 */
async function serve(url: string, sortPairs: boolean): Promise<void> {
  const pool = createPool(url);
  const log = pino({ level: "silent" });
  const pairs = sortPairs ? `sortPairs = [["${SORT_PAIR.first}", "${SORT_PAIR.second}"]]\n` : "";
  const config = parseConfig(
    `[directory]\nurl = "ldap://127.0.0.1:3890"\nbindDN = "cn=admin,dc=example,dc=org"\npassword = "\${P}"\nbase = "dc=example,dc=org"\n[[directory.types]]\nname = "user"\nbase = "${PEOPLE}"\n${pairs}`,
    { path: "bench.toml", env: { P: "x" } },
  );
  const server = createServer({ config, pool, projectorStatus: async () => [], log });
  const store = await EventStore.open(pool);
  await server.register(
    restPlugin({
      pool,
      epoch: store.epoch,
      schema,
      config,
      log,
      authentication: createAuthentication({ pool }),
    }),
  );
  const address = await server.listen({ host: "127.0.0.1", port: 0 });
  parentPort!.postMessage({ address });
  await once(parentPort!, "message");
  await server.close();
  await pool.end();
  parentPort!.postMessage({ closed: true });
}

export async function restBenchmark(): Promise<void> {
  const db = await benchDatabase();
  const { pool } = db;
  const log = pino({ level: "silent" });
  const projector = await Projector.start({ pool, projections: allProjections, log });
  await projector.stop(); // the tables exist; the rows come straight from seed()
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { role: ROLE, url: db.url, sortPairs: SORT_PAIRS },
  });
  try {
    const store = await EventStore.open(pool);
    const [{ address: base }] = (await once(worker, "message")) as [{ address: string }];
    const { token } = await createToken(pool, store, { name: "bench", access: ["read", "export"] });
    const authorization = `Bearer ${token}`;
    const client = new Worker(new URL(import.meta.url), {
      workerData: { role: CLIENT_ROLE, base, authorization },
    });
    await once(client, "message");
    // Requests made while setting up (a later page's cursor) are sent from here.
    const get = async (path: string) => {
      const response = await fetch(`${base}${path}`, { headers: { authorization } });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${path}: ${response.status} ${body}`);
      return body;
    };

    process.stderr.write(`bench: rest: seeding ${fmt(SEARCH_ENTRIES)} entries\n`);
    await seed(pool, 1, SEARCH_ENTRIES);
    if (SORT_PAIRS) {
      // As the projector builds it when annal starts with the pair configured.
      await buildReaderIndexes({
        pool,
        projection: withSortPairs(entriesProjection, [SORT_PAIR]),
        schema: "projection_entries",
        log,
      });
    }
    const catalog = AttributeCatalog.fromDirectorySchema(schema, []);
    const direct = (filter: string | undefined, sort: string | undefined) => {
      const ast =
        filter === undefined
          ? { op: "and" as const, filters: [] }
          : checkAttributes(parseFilter(filter).ast, (n) => catalog.resolve(n)?.name).ast;
      return new SearchSql({
        type: "user",
        filter: ast,
        sort: parseSort(sort, catalog).keys,
        selection: parseFields(undefined, catalog).selection,
        ...(SORT_PAIRS ? { sortPairs: [[SORT_PAIR.first, SORT_PAIR.second]] as const } : {}),
      });
    };
    const pick = (i: number) => 1 + ((i * 7919) % SEARCH_ENTRIES);
    // A later page of the filtered, sorted search: the cursor after 1,000 rows, over HTTP and
    // as a keyset position.
    const laterPath = "/api/entries/users?filter=title%20%3D%20Engineer&sort=-uidNumber&first=50";
    let laterCursor = "";
    for (let page = 0; page < 20; page++) {
      const body = JSON.parse(
        await get(`${laterPath}${laterCursor ? `&after=${encodeURIComponent(laterCursor)}` : ""}`),
      ) as { pageInfo: { endCursor: string } };
      laterCursor = body.pageInfo.endCursor;
    }
    const laterSql = direct("title = Engineer", "-uidNumber");
    let laterPosition: KeysetPosition | undefined;
    for (let page = 0; page < 20; page++) {
      const result = await searchPage(pool, laterSql, {
        direction: "forward",
        limit: 50,
        ...(laterPosition ? { position: laterPosition } : {}),
      });
      laterPosition = laterSql.positionOf(result.rows.at(-1)!);
    }
    const uuids = (
      await pool.query<{ entry_uuid: string }>(
        "SELECT entry_uuid FROM projection_entries.entries LIMIT 500",
      )
    ).rows.map((r) => r.entry_uuid);
    const cases: {
      what: string;
      /** The request's path for the i-th run. */
      path: (i: number) => string;
      sql?: (i: number, db?: Queryable) => Promise<unknown>;
    }[] = [
      {
        what: 'selective equality (1 of all), SCIM: `uid eq "user<n>"`',
        path: (i) => `/api/entries/users?filter=${encodeURIComponent(`uid eq "user${pick(i)}"`)}`,
        sql: (i, db = pool) =>
          searchPage(db, direct(`uid eq "user${pick(i)}"`, undefined), {
            direction: "forward",
            limit: 50,
          }),
      },
      {
        what: `selective filter (1 of ${fmt(SEARCH_ENTRIES)}): \`mail = user<n>@example.org\``,
        path: (i) =>
          `/api/entries/users?filter=${encodeURIComponent(`mail = user${pick(i)}@example.org`)}`,
        sql: (i, db = pool) =>
          searchPage(db, direct(`mail = user${pick(i)}@example.org`, undefined), {
            direction: "forward",
            limit: 50,
          }),
      },
      {
        what: "selective filter (≈1 in 500), LDAP: `(&(sn=Meyer)(givenName=Anna))`",
        path: () =>
          `/api/entries/users?filter=${encodeURIComponent("(&(sn=Meyer)(givenName=Anna))")}`,
        sql: (_, db = pool) =>
          searchPage(db, direct("(&(sn=Meyer)(givenName=Anna))", undefined), {
            direction: "forward",
            limit: 50,
          }),
      },
      {
        what: `sort \`sn,-givenName\`, first 50 of ${fmt(SEARCH_ENTRIES)}`,
        path: () => "/api/entries/users?sort=sn,-givenName&first=50",
        sql: (_, db = pool) =>
          searchPage(db, direct(undefined, "sn,-givenName"), { direction: "forward", limit: 50 }),
      },
      {
        what: `filter and sort: \`title = Engineer\` (${fmt(SEARCH_ENTRIES / TITLES.length)}) by \`-uidNumber\`, first 50`,
        path: () => "/api/entries/users?filter=title%20%3D%20Engineer&sort=-uidNumber&first=50",
        sql: (_, db = pool) =>
          searchPage(db, direct("title = Engineer", "-uidNumber"), {
            direction: "forward",
            limit: 50,
          }),
      },
      {
        what: "the same, a later page (after 1,000 rows, by its cursor)",
        path: () => `${laterPath}&after=${encodeURIComponent(laterCursor)}`,
        sql: (_, db = pool) =>
          searchPage(db, laterSql, { direction: "forward", limit: 50, position: laterPosition! }),
      },
      {
        what: `filter on the first sort key: \`sn eq "Meyer"\` (${fmt(SEARCH_ENTRIES / SURNAMES.length)}) by \`sn,cn\`, first 50`,
        path: () =>
          `/api/entries/users?filter=${encodeURIComponent('sn eq "Meyer"')}&sort=sn,cn&first=50`,
        sql: (_, db = pool) =>
          searchPage(db, direct('sn eq "Meyer"', "sn,cn"), { direction: "forward", limit: 50 }),
      },
      {
        what: 'substring, SCIM: `cn co "na mey"` (≈1 in 500), first 50',
        path: () => `/api/entries/users?filter=${encodeURIComponent('cn co "na mey"')}`,
        sql: (_, db = pool) =>
          searchPage(db, direct('cn co "na mey"', undefined), { direction: "forward", limit: 50 }),
      },
      {
        what: "no filter, default order (entryUUID), first 50",
        path: () => "/api/entries/users?first=50",
        sql: (_, db = pool) =>
          searchPage(db, direct(undefined, undefined), { direction: "forward", limit: 50 }),
      },
      {
        what: "lookup by entryUUID",
        path: (i) => `/api/entries/users/${uuids[i % uuids.length]}`,
      },
    ];
    const searchRows: string[] = [];
    const plans: string[] = [];
    for (const test of cases) {
      process.stderr.write(`bench: rest: ${test.what}\n`);
      const http = await measureOverHttp(client, test.path);
      const sql = test.sql ? await measure((i) => test.sql!(i)) : undefined;
      if (test.sql) {
        // The statements one request of the case issues, each with its plan as run.
        const { db, statements } = recording(pool);
        await test.sql(1, db);
        const explained: string[] = [];
        for (const statement of statements) {
          const plan = await pool.query<{ "QUERY PLAN": string }>(
            `EXPLAIN (ANALYZE, COSTS OFF, SUMMARY ON) ${statement.text}`,
            statement.params,
          );
          explained.push(plan.rows.map((row) => row["QUERY PLAN"]).join("\n"));
        }
        plans.push(`#### ${test.what}\n\n\`\`\`\n${explained.join("\n\n")}\n\`\`\``);
      }
      process.stderr.write(
        `bench: rest:   http p50 ${fmt(http.p50, 1)} p99 ${fmt(http.p99, 1)} ms; sql ${sql ? `p50 ${fmt(sql.p50, 1)} p99 ${fmt(sql.p99, 1)} ms` : "–"}\n`,
      );
      searchRows.push(
        `| ${test.what} | ${fmt(http.p50, 1)} | ${fmt(http.p99, 1)} | ${sql ? `${fmt(sql.p50, 1)} / ${fmt(sql.p99, 1)}` : "–"} |`,
      );
    }

    const large = SEARCH_ENTRIES !== 100_000;
    const markdown = `## REST channel${large ? `, ${fmt(SEARCH_ENTRIES)} entries` : ""}

Command: \`npm run bench -- rest${sizeOption()}${SORT_PAIRS ? " --sort-pairs" : ""}${process.argv.includes("--no-export") ? " --no-export" : ""}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}

Entries are written straight into the \`entries\` projection (realistic inetOrgPerson attributes,
10 per entry) and served by the real server over loopback HTTP with a bearer token, one request at
a time. The server runs in a worker thread of its own (its own event loop and heap), as it would
in a process of its own, and the requests are sent from another worker thread that does nothing
else; the main thread seeds and runs the direct SQL.
Latency in milliseconds over ${fmt(RUNS)} requests after ${WARMUP} warm-up ones; the last column
runs the same SQL the channel issues (\`SearchSql\` + \`searchPage\`) straight on the pool, so the
difference is HTTP, authentication and JSON.

### Search and lookup, ${fmt(SEARCH_ENTRIES)} entries

| request | p50 ms | p99 ms | same SQL direct, p50 / p99 ms |
|---|---:|---:|---:|
${searchRows.join("\n")}

Filters are answered from the \`entry_values\` side table of the \`entries\` projection (every
value case-folded, a btree on (type, attribute, value, entry) and a pg_trgm GIN index for
substrings): equality, presence, ranges and prefixes are index lookups, a substring a trigram
lookup. A page sorted by an attribute walks that attribute's index in order (\`ordinal = 0\`, the
first value) and probes each entry's filter, stopping after the page: a later page starts at its
cursor in the index (its plan reads about 800 index entries for 50 rows), and annal's connections
plan no parallel workers, whose start-up cost more than the walk. An \`and\` of comparisons
intersects their index ranges, which come out in entry order, so the merge stops with the page. A
second sort key orders each group of the first key's ties: a group of at most 2,000 matches is
sorted, a larger one walks the second key's index within it (\`sn\` has 20 distinct values, so
one surname is 5% of the entries: the first page of \`sn,-givenName\` finds its surname from
the first keys of the next 51 entries, counts that group up to the bound, and walks
\`givenName\` probing each entry's surname). A filter on the first sort key itself
(\`sn eq "Meyer"\` by \`sn,cn\`) is one such group: once the index of the values after an
entry's first (\`entry_values_later\`) shows no entry meets the filter with a later value, a page
reads that surname's range of \`sn\` alone, counts it up to the bound from the filter's range,
and walks \`cn\` probing each key's surname before it reads the entry (it sorted all the
group's matches before: 620 ms a page at 1,000,000 people in the memory benchmark). Load average
when the run ended: ${os
      .loadavg()
      .map((n) => n.toFixed(1))
      .join(", ")}.

### Plans of the direct SQL (\`EXPLAIN ANALYZE\`, one request of each case)

Each request is a page query, and for a cursor page also the two that set \`hasPreviousPage\`
(the cursor's own row, and one row on the other side).

${plans.join("\n\n")}`;
    recordResults(large ? `rest-${SEARCH_ENTRIES}` : "rest", markdown);
    process.stdout.write(`${markdown}\n`);
    client.postMessage({ close: true });
    await once(client, "exit");
    if (process.argv.includes("--no-export")) return;

    const exportRows: string[] = [];
    const rssRows: string[] = [];
    const exportQuery = (format: string) =>
      `/api/entries/users?fields=cn,sn,mail,title,uidNumber&filename=users.${format}`;
    const copyQuery = `SELECT e.entry_uuid, e.dn, e.attributes -> 'cn', e.attributes -> 'sn', e.attributes -> 'mail', e.attributes -> 'title', e.attributes -> 'uidNumber' FROM projection_entries.entries AS e WHERE e.type = 'user' ORDER BY e.entry_uuid`;
    let seeded = SEARCH_ENTRIES;
    for (const rows of EXPORT_STEPS.filter((step) => step >= SEARCH_ENTRIES)) {
      if (rows > seeded) {
        process.stderr.write(`bench: rest: seeding up to ${fmt(rows)} entries\n`);
        await seed(pool, seeded + 1, rows);
        seeded = rows;
      }
      global.gc?.();
      const results: Record<string, Awaited<ReturnType<typeof download>>> = {};
      for (const format of ["csv", "ndjson"]) {
        process.stderr.write(`bench: rest: export ${fmt(rows)} rows as ${format}\n`);
        results[format] = await download(`${base}${exportQuery(format)}`, authorization);
      }
      const csv = results.csv!;
      const ndjson = results.ndjson!;
      rssRows.push(
        `| ${fmt(rows)} | ${mb(csv.before)} | ${mb(csv.peakRss)} | ${mb(ndjson.peakRss)} |`,
      );
      if (rows === EXPORT_STEPS.at(-1)) {
        const copy = await copyBaseline(db.url, copyQuery);
        const copyRate = copy ? rows / copy.seconds : undefined;
        for (const [format, result] of Object.entries(results)) {
          const rate = rows / result.seconds;
          exportRows.push(
            `| ${format.toUpperCase()} | ${fmt(rate)} | ${mb(result.bytes)} | ${copyRate ? fmt(copyRate) : "–"} | ${copyRate ? fmt(rate / copyRate, 2) : "–"} |`,
          );
        }
        if (copy)
          exportRows.push(
            `| \`COPY … TO STDOUT (FORMAT csv)\` via psql | ${fmt(copyRate!)} | ${mb(copy.bytes)} | | |`,
          );
      }
    }

    const exportMarkdown = `## REST channel: export${large ? `, ${fmt(SEARCH_ENTRIES)} entries` : ""}

Command: \`npm run bench -- rest${sizeOption()}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}

### Export, ${fmt(EXPORT_STEPS.at(-1)!)} rows (5 attributes + entryUUID and DN)

| format | rows/s | size MiB | \`COPY\` rows/s | ratio |
|---|---:|---:|---:|---:|
${exportRows.join("\n")}

The export reads a database cursor ${fmt(1000)} rows at a time and writes as it reads; it includes the
row-limit check (a bounded count) and runs with the default \`[rest.export]\` settings. \`COPY\`
selects the same rows and columns in the same order and leaves the formatting to PostgreSQL.

### Memory while exporting (resident set of the benchmark's process, server thread included, MiB)

| rows | before | peak, CSV | peak, NDJSON |
|---:|---:|---:|---:|
${rssRows.join("\n")}

The peak does not grow with the number of rows: the stream holds one batch and a 64 KiB buffer.`;
    recordResults(large ? `rest-export-${SEARCH_ENTRIES}` : "rest-export", exportMarkdown);
    process.stdout.write(`${exportMarkdown}\n`);
  } finally {
    worker.postMessage({ close: true });
    await once(worker, "message");
    await worker.terminate();
    await db.close();
  }
}

const role = isMainThread ? undefined : (workerData as { role?: string } | null)?.role;
if (role === ROLE) {
  const { url, sortPairs } = workerData as { url: string; sortPairs: boolean };
  await serve(url, sortPairs);
}
if (role === CLIENT_ROLE) {
  const { base, authorization } = workerData as { base: string; authorization: string };
  await sendRequests(base, authorization);
}
