import { spawn } from "node:child_process";
import { pino } from "pino";
import { createToken } from "../src/auth/index.ts";
import { parseConfig } from "../src/config/index.ts";
import type { Pool } from "../src/db/index.ts";
import { parseSubschema } from "../src/directory/schema.ts";
import { parseFilter, checkAttributes } from "../src/filters/index.ts";
import { createServer } from "../src/http/index.ts";
import { Projector } from "../src/projector/index.ts";
import { AttributeCatalog } from "../src/rest/catalog.ts";
import { parseFields } from "../src/rest/fields.ts";
import { restPlugin } from "../src/rest/index.ts";
import { searchPage } from "../src/rest/search/page.ts";
import { SearchSql } from "../src/rest/search/sql.ts";
import { parseSort } from "../src/rest/sort.ts";
import { EventStore } from "../src/store/index.ts";
import { allProjections } from "../projections/index.ts";
import { benchDatabase, fmt, machine, percentile, recordResults, time } from "./support.ts";
import { createAuthentication } from "../src/auth/index.ts";

const SEARCH_ENTRIES = 100_000;
const EXPORT_STEPS = [100_000, 300_000, 1_000_000];
const RUNS = 200;
const WARMUP = 10;
const PEOPLE = "ou=people,dc=example,dc=org";
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

/** Entries `from`..`to` of type user, straight into the `entries` projection (as capture would leave them). */
export async function seed(pool: Pool, from: number, to: number): Promise<void> {
  for (let start = from; start <= to; start += 100_000) {
    const end = Math.min(to, start + 99_999);
    await pool.query(
      `INSERT INTO projection_entries.entries
         (entry_uuid, type, dn, dn_norm, attributes, operational, created_at, modified_at, version, position, transaction_id)
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
              now(), now(), 1, g, '1'::xid8
         FROM (SELECT g, gen_random_uuid() AS u,
                      ($3::text[])[1 + g % cardinality($3::text[])] AS sn,
                      ($4::text[])[1 + (g / 20) % cardinality($4::text[])] AS given,
                      ($5::text[])[1 + g % cardinality($5::text[])] AS title
                 FROM generate_series($1::int, $2::int) AS g) AS s`,
      [start, end, SURNAMES, GIVEN, TITLES],
    );
  }
  await pool.query("ANALYZE projection_entries.entries");
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

export async function restBenchmark(): Promise<void> {
  const db = await benchDatabase();
  const { pool } = db;
  const log = pino({ level: "silent" });
  const config = parseConfig(
    `[directory]\nurl = "ldap://127.0.0.1:3890"\nbindDN = "cn=admin,dc=example,dc=org"\npassword = "\${P}"\nbase = "dc=example,dc=org"\n[[directory.types]]\nname = "user"\nbase = "${PEOPLE}"\n`,
    { path: "bench.toml", env: { P: "x" } },
  );
  const projector = await Projector.start({ pool, projections: allProjections, log });
  await projector.stop(); // the tables exist; the rows come straight from seed()
  const server = createServer({
    config,
    pool,
    projectorStatus: async () => [],
    log,
  });
  try {
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
    const base = await server.listen({ host: "127.0.0.1", port: 0 });
    const { token } = await createToken(pool, store, { name: "bench", access: ["read", "export"] });
    const authorization = `Bearer ${token}`;
    const get = async (path: string) => {
      const response = await fetch(`${base}${path}`, { headers: { authorization } });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`${path}: ${response.status} ${body}`);
      return body;
    };

    process.stderr.write(`bench: rest: seeding ${fmt(SEARCH_ENTRIES)} entries\n`);
    await seed(pool, 1, SEARCH_ENTRIES);
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
      });
    };
    const pick = (i: number) => 1 + ((i * 7919) % SEARCH_ENTRIES);
    const uuids = (
      await pool.query<{ entry_uuid: string }>(
        "SELECT entry_uuid FROM projection_entries.entries LIMIT 500",
      )
    ).rows.map((r) => r.entry_uuid);
    const cases: {
      what: string;
      http: (i: number) => Promise<unknown>;
      sql?: (i: number) => Promise<unknown>;
    }[] = [
      {
        what: "selective filter (1 of 100,000): `mail = user<n>@example.org`",
        http: (i) =>
          get(
            `/api/entries/users?filter=${encodeURIComponent(`mail = user${pick(i)}@example.org`)}`,
          ),
        sql: (i) =>
          searchPage(pool, direct(`mail = user${pick(i)}@example.org`, undefined), {
            direction: "forward",
            limit: 50,
          }),
      },
      {
        what: "selective filter (≈1 in 500), LDAP: `(&(sn=Meyer)(givenName=Anna))`",
        http: () =>
          get(`/api/entries/users?filter=${encodeURIComponent("(&(sn=Meyer)(givenName=Anna))")}`),
        sql: () =>
          searchPage(pool, direct("(&(sn=Meyer)(givenName=Anna))", undefined), {
            direction: "forward",
            limit: 50,
          }),
      },
      {
        what: "sort `sn,-givenName`, first 50 of 100,000",
        http: () => get("/api/entries/users?sort=sn,-givenName&first=50"),
        sql: () =>
          searchPage(pool, direct(undefined, "sn,-givenName"), { direction: "forward", limit: 50 }),
      },
      {
        what: "filter and sort: `title = Engineer` (8,333) by `-uidNumber`, first 50",
        http: () =>
          get("/api/entries/users?filter=title%20%3D%20Engineer&sort=-uidNumber&first=50"),
        sql: () =>
          searchPage(pool, direct("title = Engineer", "-uidNumber"), {
            direction: "forward",
            limit: 50,
          }),
      },
      {
        what: "no filter, default order (entryUUID), first 50",
        http: () => get("/api/entries/users?first=50"),
        sql: () =>
          searchPage(pool, direct(undefined, undefined), { direction: "forward", limit: 50 }),
      },
      {
        what: "lookup by entryUUID",
        http: (i) => get(`/api/entries/users/${uuids[i % uuids.length]}`),
      },
    ];
    const searchRows: string[] = [];
    for (const test of cases) {
      process.stderr.write(`bench: rest: ${test.what}\n`);
      const http = await measure(test.http);
      const sql = test.sql ? await measure(test.sql) : undefined;
      searchRows.push(
        `| ${test.what} | ${fmt(http.p50, 1)} | ${fmt(http.p99, 1)} | ${sql ? `${fmt(sql.p50, 1)} / ${fmt(sql.p99, 1)}` : "–"} |`,
      );
    }

    const exportRows: string[] = [];
    const rssRows: string[] = [];
    const exportQuery = (format: string) =>
      `/api/entries/users?fields=cn,sn,mail,title,uidNumber&filename=users.${format}`;
    const copyQuery = `SELECT e.entry_uuid, e.dn, e.attributes -> 'cn', e.attributes -> 'sn', e.attributes -> 'mail', e.attributes -> 'title', e.attributes -> 'uidNumber' FROM projection_entries.entries AS e WHERE e.type = 'user' ORDER BY e.entry_uuid`;
    let seeded = SEARCH_ENTRIES;
    for (const rows of EXPORT_STEPS) {
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

    const markdown = `## REST channel

Command: \`npm run bench -- rest\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}

Entries are written straight into the \`entries\` projection (realistic inetOrgPerson attributes,
10 per entry) and served by the real server over loopback HTTP with a bearer token, one request at
a time. Latency in milliseconds over ${RUNS} requests after ${WARMUP} warm-up ones; the last column
runs the same SQL the channel issues (\`SearchSql\` + \`searchPage\`) straight on the pool, so the
difference is HTTP, authentication and JSON.

### Search and lookup, ${fmt(SEARCH_ENTRIES)} entries

| request | p50 ms | p99 ms | same SQL direct, p50 / p99 ms |
|---|---:|---:|---:|
${searchRows.join("\n")}

Filters compare case-insensitively on any value (\`EXISTS (… jsonb_array_elements_text …)\`), which
no index serves: a filter costs one pass over the type's entries. With the default order the planner
walks the (type, entryUUID) index expecting matches early, so a filter that matches almost nothing
is the worst case (every entry visited in index order). An index of case-folded values in the
\`entries\` projection would let equality use a GIN lookup instead. Sorting by an attribute sorts
the matching entries on an expression; keyset pages keep every later page at the same cost. The
machine was shared with other work while this ran.

### Export, ${fmt(EXPORT_STEPS.at(-1)!)} rows (5 attributes + entryUUID and DN)

| format | rows/s | size MiB | \`COPY\` rows/s | ratio |
|---|---:|---:|---:|---:|
${exportRows.join("\n")}

The export reads a database cursor ${fmt(1000)} rows at a time and writes as it reads; it includes the
row-limit check (a bounded count) and runs with the default \`[rest.export]\` settings. \`COPY\`
selects the same rows and columns in the same order and leaves the formatting to PostgreSQL.

### Memory while exporting (resident set of the whole server process, MiB)

| rows | before | peak, CSV | peak, NDJSON |
|---:|---:|---:|---:|
${rssRows.join("\n")}

The peak does not grow with the number of rows: the stream holds one batch and a 64 KiB buffer.`;
    recordResults("rest", markdown);
    process.stdout.write(`${markdown}\n`);
  } finally {
    await server.close();
    await db.close();
  }
}
