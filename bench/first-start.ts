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
import { BUILT_IN_REDACTED_ATTRIBUTES } from "../src/config/index.ts";
import { loadDirectorySchema } from "../src/directory/schema.ts";
import { Projector, waitForProjection } from "../src/projector/index.ts";
import { SLAPD_BASE } from "../src/slapd/index.ts";
import { EventStore, readHead } from "../src/store/index.ts";
import { ENTRIES } from "../projections/entries/index.ts";
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
 * every entry, then the projector until every projection has applied it (the REST channel
 * then serves every entry). Each part is timed (the import by what it waited on, the
 * projections by what the projector logs of its bulk build), and set against PostgreSQL's own
 * COPY of the same rows into a table of the log's shape without indexes, in the same run.
 */
export async function firstStartBenchmark(): Promise<void> {
  const sample = await sampleDirectory("first-start", PEOPLE);
  const db = await benchDatabase();
  try {
    const { pool } = db;
    const schema = await loadDirectorySchema(sample.client);
    /** What the projector logs of its bulk builds, by projection. */
    const bulk: Record<string, { applyMs: number; indexMs: number }> = {};
    const context: CaptureContext = {
      pool,
      store: await EventStore.open(pool),
      directory: sample.client,
      normalizer: createNormalizer(schema, {
        types: [
          { name: "user", base: `ou=people,${SLAPD_BASE}`, filter: "(objectClass=inetOrgPerson)" },
          { name: "group", base: `ou=groups,${SLAPD_BASE}`, filter: "(objectClass=groupOfNames)" },
        ],
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
      info(fields: unknown) {
        const f = fields as { projection?: string; applyMs?: number; indexMs?: number };
        if (f.projection && f.applyMs !== undefined) {
          const seen = (bulk[f.projection] ??= { applyMs: 0, indexMs: 0 });
          seen.applyMs += f.applyMs;
          seen.indexMs += f.indexMs ?? 0;
        }
      },
      warn: (...args: unknown[]) => process.stderr.write(`bench: warn ${JSON.stringify(args)}\n`),
      error: (...args: unknown[]) => process.stderr.write(`bench: error ${JSON.stringify(args)}\n`),
    };

    process.stderr.write(`bench: first-start: importing\n`);
    const timings = importTimings();
    const started = performance.now();
    await ensureImported(context, "accesslog", { timings });
    const imported = performance.now();
    process.stderr.write(
      `bench: first-start: imported in ${fmt((imported - started) / 1000, 1)} s\n`,
    );
    const projector = await Projector.start({ pool, projections: allProjections, log });
    const head = await readHead(pool);
    for (const projection of allProjections) {
      await waitForProjection(pool, projection.name, head, 3_600_000);
    }
    const done = performance.now();
    process.stderr.write(
      `bench: first-start: projected in ${fmt((done - imported) / 1000, 1)} s\n`,
    );
    await projector.stop();
    const served = Number(
      (await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${ENTRIES}`)).rows[0]!.n,
    );
    const events = Number(
      (await pool.query<{ n: string }>("SELECT count(*) AS n FROM events")).rows[0]!.n,
    );
    if (served !== events) throw new Error(`${served} entries served of ${events} imported`);

    const copyMs = await copyAnchor(db.pool);
    const totalMs = done - started;
    const importMs = imported - started;
    const projectionsMs = done - imported;
    const applyMs = Object.values(bulk).reduce((sum, b) => sum + b.applyMs, 0);
    const indexMs = Object.values(bulk).reduce((sum, b) => sum + b.indexMs, 0);
    const row = (what: string, ms: number) =>
      `| ${what} | ${fmt(ms / 1000, 2)} | ${fmt(ms / copyMs, 1)} |`;
    const perProjection = Object.entries(bulk)
      .map(([name, b]) => `${name} ${fmt(b.applyMs / 1000, 2)} + ${fmt(b.indexMs / 1000, 2)}`)
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

From an empty database until every projection has applied the import (the REST channel
serves every entry): capture's first import (one transaction), then the projector. The
import's parts are the time it waited on each (a page is written while the next is read);
the projections' parts are what the projector logs of its bulk build (${perProjection || "no bulk build"}).
Ratios are to PostgreSQL's \`COPY … FROM STDIN (FORMAT binary)\` of the same ${fmt(events)} event
rows into a table of the log's shape without indexes, in the same run: ${fmt(copyMs / 1000, 2)} s.

| part | seconds | × the COPY |
|---|---:|---:|
${row("LDAP read (waiting for the directory's pages)", timings.read)}
${row("normalising (entries to snapshot events)", timings.normalise)}
${row("COPY into the log (waiting for the pages' writes)", timings.write)}
${row("import in all", importMs)}
${row("projections: bulk build (rows and value indexes; summed, they run side by side)", applyMs)}
${row("projections: readers' indexes, built after the load (summed)", indexMs)}
${row("projections in all (projector start to every projection at the head)", projectionsMs)}
${row("**first start in all**", totalMs)}
`,
    );
  } finally {
    await db.close();
    await sample.close();
  }
}

/** Milliseconds PostgreSQL takes to COPY the log's rows into a fresh table of their shape. */
async function copyAnchor(pool: import("../src/db/index.ts").Pool): Promise<number> {
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
