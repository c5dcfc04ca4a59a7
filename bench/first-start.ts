import os from "node:os";
import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { from as copyFrom, to as copyTo } from "pg-copy-streams";
import {
  createNormalizer,
  ensureImported,
  importTimings,
  type CaptureContext,
} from "../src/capture/index.ts";
import { pino } from "pino";
import { createAuthentication, createToken } from "../src/auth/index.ts";
import { BUILT_IN_REDACTED_ATTRIBUTES, parseConfig } from "../src/config/index.ts";
import type { Pool } from "../src/db/index.ts";
import { loadDirectorySchema, type DirectorySchema } from "../src/directory/schema.ts";
import { createServer } from "../src/http/index.ts";
import { Projector, waitForProjection } from "../src/projector/index.ts";
import { restPlugin } from "../src/rest/index.ts";
import { SLAPD_BASE } from "../src/slapd/index.ts";
import { EventStore, readHead } from "../src/store/index.ts";
import { allProjections } from "../projections/index.ts";
import {
  benchDatabase,
  benchSize,
  fmt,
  machine,
  recordResults,
  sampleDirectory,
  sizeOption,
} from "./support.ts";

/** People in the sample directory (`--size 100k`); the directory holds their groups too. */
const PEOPLE = benchSize(10_000);
const quiet = { info() {}, warn() {}, error() {}, debug() {} };

/**
 * The first start, as `annal start` runs it on an empty database: capture's first import of
 * every entry, then the projector, with the REST channel asked all along whether a search of
 * every user answers all of them (the moment the first start is usable), until every
 * projection has applied the import and the readers' indexes dropped for the bulk load are
 * built again. Each part is timed (the import by what it waited on, the projections by what
 * the projector logs), and set against PostgreSQL's own COPY of the same rows into a table of
 * the log's shape without indexes, in the same run.
 */
export async function firstStartBenchmark(): Promise<void> {
  const sample = await sampleDirectory("first-start", PEOPLE);
  const db = await benchDatabase();
  try {
    const { pool } = db;
    const schema = await loadDirectorySchema(sample.client);
    /** What the projector logs of its bulk builds and of the readers' indexes, by projection. */
    const bulk: Record<string, { applyMs: number; indexesDropped: number }> = {};
    const indexes: Record<string, { seconds: number; at: number }> = {};
    const context: CaptureContext = {
      pool,
      store: await EventStore.open(pool),
      directory: sample.client,
      normalizer: createNormalizer(schema, {
        types: TYPES,
        capture: {
          source: "accesslog",
          interval: 250,
          reconcileInterval: 600_000,
          snapshotInterval: 0,
          redact: [...BUILT_IN_REDACTED_ATTRIBUTES],
        },
      }),
      base: SLAPD_BASE,
      log: quiet,
    };
    const log = {
      ...quiet,
      info(fields: unknown, message?: string) {
        const f = fields as {
          projection?: string;
          applyMs?: number;
          indexesDropped?: number;
          seconds?: number;
        };
        if (!f.projection) return;
        if (message === "first snapshots applied in bulk") {
          const seen = (bulk[f.projection] ??= { applyMs: 0, indexesDropped: 0 });
          seen.applyMs += f.applyMs ?? 0;
          seen.indexesDropped += f.indexesDropped ?? 0;
        } else if (message === "readers' indexes built") {
          indexes[f.projection] = { seconds: f.seconds ?? 0, at: performance.now() };
        }
      },
      warn: (...args: unknown[]) => process.stderr.write(`bench: warn ${JSON.stringify(args)}\n`),
      error: (...args: unknown[]) => process.stderr.write(`bench: error ${JSON.stringify(args)}\n`),
    };
    const rest = await restChannel(pool, schema);

    process.stderr.write(`bench: first-start: importing\n`);
    const timings = importTimings();
    const started = performance.now();
    await ensureImported(context, "accesslog", { timings });
    const imported = performance.now();
    process.stderr.write(
      `bench: first-start: imported in ${fmt((imported - started) / 1000, 1)} s\n`,
    );
    const projector = await Projector.start({ pool, projections: allProjections, log });
    const users = sample.people.length;
    // The REST channel asked, as a client would, until a search of every user counts them all.
    const serving = (async () => {
      for (;;) {
        const count = await rest.countUsers();
        if (count === users) return performance.now();
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const head = await readHead(pool);
    for (const projection of allProjections) {
      await waitForProjection(pool, projection.name, head, 3_600_000);
    }
    const done = performance.now();
    const served = await serving;
    process.stderr.write(
      `bench: first-start: REST served every user after ${fmt((served - started) / 1000, 1)} s; ` +
        `projected in ${fmt((done - imported) / 1000, 1)} s\n`,
    );
    // The readers' indexes dropped for the load are built after it, beside the projections.
    const pending = () =>
      Object.entries(bulk).filter(([name, b]) => b.indexesDropped > 0 && !indexes[name]);
    while (pending().length > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    const indexed = Math.max(done, ...Object.values(indexes).map((i) => i.at));
    process.stderr.write(
      `bench: first-start: readers' indexes built after ${fmt((indexed - started) / 1000, 1)} s\n`,
    );
    await projector.stop();
    await rest.close();
    const events = Number(
      (await pool.query<{ n: string }>("SELECT count(*) AS n FROM events")).rows[0]!.n,
    );

    const copyMs = await copyAnchor(db.pool);
    const importMs = imported - started;
    const applyMs = Object.values(bulk).reduce((sum, b) => sum + b.applyMs, 0);
    const indexMs = Object.values(indexes).reduce((sum, i) => sum + i.seconds * 1000, 0);
    const row = (what: string, ms: number) =>
      `| ${what} | ${fmt(ms / 1000, 2)} | ${fmt(ms / copyMs, 1)} |`;
    const perProjection = Object.entries(bulk)
      .map(
        ([name, b]) =>
          `${name} ${fmt(b.applyMs / 1000, 2)}${indexes[name] ? ` + ${fmt(indexes[name].seconds, 2)}` : ""}`,
      )
      .join("; ");
    recordResults(
      `first-start${sizeOption().replace(/\s+--size\s+/, "-")}`,
      `## First start, ${fmt(events)} entries (${fmt(PEOPLE)} people and their groups)

Command: \`npm run bench -- first-start${sizeOption()}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}; OpenLDAP slapd from Debian, on loopback. Load average at the end of the
run: ${os
        .loadavg()
        .map((load) => fmt(load, 1))
        .join(
          ", ",
        )}${os.loadavg()[0]! > os.cpus().length ? " (a loaded machine: compare the ratios, not the seconds)" : ""}.

From an empty database: capture's first import (one transaction), then the projector, until
the REST channel serves every entry (a search of every user with \`include=count\`, asked every
100 ms, answers all ${fmt(users)}), every projection has applied the import, and the readers'
indexes dropped for the bulk load are built again (\`CREATE INDEX CONCURRENTLY\`, after the
load's commit, while the projections serve). The import's parts are the time it waited on each
(a page is written while the next is read); the projections' parts are what the projector logs
(bulk build + readers' indexes, in seconds: ${perProjection || "no bulk build"}).
Ratios are to PostgreSQL's \`COPY … FROM STDIN (FORMAT binary)\` of the same ${fmt(events)} event
rows into a table of the log's shape without indexes, in the same run: ${fmt(copyMs / 1000, 2)} s.

| part | seconds | × the COPY |
|---|---:|---:|
${row("LDAP read (waiting for the directory's pages)", timings.read)}
${row("normalising (entries to snapshot events)", timings.normalise)}
${row("COPY into the log (waiting for the pages' writes)", timings.write)}
${row("import in all", importMs)}
${row("projections: bulk build (rows and value indexes; summed, they run side by side)", applyMs)}
${row("projections in all (projector start to every projection at the head)", done - imported)}
${row("readers' indexes, built concurrently after the load (summed)", indexMs)}
${row("**until the REST channel serves every entry**", served - started)}
${row("until every projection is at the head", done - started)}
${row("until every readers' index is built", indexed - started)}
`,
    );
  } finally {
    await db.close();
    await sample.close();
  }
}

const TYPES = [
  { name: "user", base: `ou=people,${SLAPD_BASE}`, filter: "(objectClass=inetOrgPerson)" },
  { name: "group", base: `ou=groups,${SLAPD_BASE}`, filter: "(objectClass=groupOfNames)" },
];

/** annal's REST channel over `pool`, asked in process (no sockets), as a reader of `users`. */
async function restChannel(pool: Pool, schema: DirectorySchema) {
  const config = parseConfig(
    `[directory]
url = "ldap://127.0.0.1:3890"
bindDN = "cn=admin,dc=example,dc=org"
password = "\${P}"
base = "${SLAPD_BASE}"
${TYPES.map((type) => `[[directory.types]]\nname = "${type.name}"\nbase = "${type.base}"\nfilter = "${type.filter}"\n`).join("")}`,
    { path: "bench.toml", env: { P: "x" } },
  );
  const log = pino({ level: "silent" });
  const store = await EventStore.open(pool);
  const app = createServer({ config, pool, projectorStatus: async () => [], log });
  await app.register(
    restPlugin({
      pool,
      epoch: store.epoch,
      schema,
      config,
      log,
      authentication: createAuthentication({ pool }),
    }),
  );
  await app.ready();
  const { token } = await createToken(pool, store, { name: "bench", access: ["read"] });
  return {
    /** How many users a search of every user counts; undefined while it fails. */
    async countUsers(): Promise<number | undefined> {
      const response = await app.inject({
        method: "GET",
        url: "/api/entries/users?include=count",
        headers: { authorization: `Bearer ${token}` },
      });
      return response.statusCode === 200 ? (response.json() as { count: number }).count : undefined;
    },
    close: () => app.close(),
  };
}

/** Milliseconds PostgreSQL takes to COPY the log's rows into a fresh table of their shape. */
async function copyAnchor(pool: Pool): Promise<number> {
  const client = await pool.connect();
  try {
    const columns = `id, stream_id, stream_version, type, data, metadata, idempotency_key,
      occurred_at, recorded_at`;
    const chunks: Buffer[] = [];
    await pipeline(
      client.query(copyTo(`COPY (SELECT ${columns} FROM events) TO STDOUT (FORMAT binary)`)),
      new Writable({
        write(chunk: Buffer, _encoding, callback) {
          chunks.push(chunk);
          callback();
        },
      }),
    );
    await client.query(
      "CREATE TABLE copy_anchor (LIKE events INCLUDING DEFAULTS INCLUDING IDENTITY)",
    );
    const started = performance.now();
    await pipeline(
      Readable.from(chunks),
      client.query(copyFrom(`COPY copy_anchor (${columns}) FROM STDIN (FORMAT binary)`)),
    );
    const ms = performance.now() - started;
    await client.query("DROP TABLE copy_anchor");
    return ms;
  } finally {
    client.release();
  }
}
