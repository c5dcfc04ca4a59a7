import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createToken } from "../src/auth/index.ts";
import { readCaptureCheckpoint } from "../src/capture/index.ts";
import { normalizeDN } from "../src/directory/index.ts";
import { waitForProjection } from "../src/projector/index.ts";
import { SLAPD_BASE } from "../src/slapd/index.ts";
import { EventStore, readHead, type LogPosition } from "../src/store/index.ts";
import { allProjections } from "../projections/index.ts";
import { ENTRIES as ENTRIES_TABLE } from "../projections/entries/index.ts";
import { readersIndexesBuilt, startAnnalProcess, until } from "./annal-process.ts";
import {
  benchDatabase,
  benchSize,
  fmt,
  machine,
  percentile,
  recordResults,
  sampleDirectory,
  sizeOption,
} from "./support.ts";

/**
 * The tail of a request's time while the directory's last write is a large one (issue 57):
 * `annal start` as a process of its own over a directory of 100,000 people, and the same
 * requests timed after a small write, after the add of a group of every person, and after one
 * member left that group (whose accesslog record then holds the whole old entry in `reqOld`).
 * Capture runs as annal runs it (its passes, the accesslog watch): a pass that read and
 * decoded the last write again and again held the event loop 100 to 250 ms, twice a second,
 * and the request under way then was the p99. The baseline is the same requests after the
 * small write, in the same run.
 */
const ENTRIES = benchSize(100_000);
const LARGE = ENTRIES !== 100_000;
/** p99.9 is then the tenth slowest. */
const REQUESTS = 10_000;
const GRAPHQL_REQUESTS = 5_000;
/** Issue 57's bounds: the large phases within 2× of the baseline, the selective p99 under 10 ms. */
const RATIO_BOUND = 2;
const P99_BOUND_MS = 10;
/** Writes whose capture lag is measured; issue 57's bound for its p99. */
const LAG_WRITES = 200;
const LAG_BOUND_MS = 100;
/**
 * `--lag-only`: the same writes, but no requests timed after them, only the capture lag (in
 * a section of its own): a run in minutes instead of most of an hour.
 */
const LAG_ONLY = process.argv.includes("--lag-only");

interface Timings {
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
}

export async function tailBenchmark(): Promise<void> {
  const sample = await sampleDirectory("tail", ENTRIES);
  const { people, client: directory } = sample;
  const dir = mkdtempSync(path.join(os.tmpdir(), "annal-bench-tail-"));
  const db = await benchDatabase();
  const server = await startAnnalProcess({
    sample,
    db,
    dir,
    toml: `[graphql]
schema = ["${path.resolve("ops/demo/gateway/people.graphql")}", "${path.resolve("ops/demo/gateway/groups.graphql")}"]

[graphql.types.Person]
base = "ou=people,${SLAPD_BASE}"
objectClass = ["inetOrgPerson"]

[graphql.types.Group]
base = "ou=groups,${SLAPD_BASE}"
objectClass = ["groupOfNames"]`,
  });
  try {
    const store = await EventStore.open(db.pool);
    const { token } = await createToken(db.pool, store, { name: "bench", access: ["read"] });
    const authorization = `Bearer ${token}`;
    const { base } = server;
    await server.healthy;
    const phase = <T>(work: Promise<T>) => Promise.race([work, server.ended]);

    process.stderr.write(`bench: tail: the first start of ${fmt(ENTRIES)} entries\n`);
    await phase(
      (async () => {
        await until(async () => (await readCaptureCheckpoint(db.pool, "accesslog")) !== undefined);
        const head = await readHead(db.pool);
        for (const projection of allProjections) {
          await waitForProjection(db.pool, projection.name, head, 3_600_000);
        }
        await until(async () => readersIndexesBuilt(server.log));
      })(),
    );

    const uids = people.map((p) => p.dn.slice(4, p.dn.indexOf(",")));
    const pick = (i: number) => uids[(i * 7919) % uids.length]!;
    const rest = (i: number) =>
      `${base}/api/entries/users?filter=${encodeURIComponent(`uid eq "${pick(i)}"`)}`;
    const graphql = (i: number) =>
      JSON.stringify({ query: `{ person(by: { uid: "${pick(i)}" }) { uid displayName mail } }` });
    const time = async (count: number, request: (i: number) => Promise<Response>) => {
      const samples: number[] = [];
      for (let i = 0; i < count; i++) {
        const started = performance.now();
        const response = await request(i);
        const body = await response.text();
        if (response.status !== 200 || body.includes('"errors"')) {
          throw new Error(`request ${i}: ${response.status} ${body.slice(0, 300)}`);
        }
        samples.push(performance.now() - started);
      }
      samples.sort((a, b) => a - b);
      return {
        p50: percentile(samples, 50),
        p99: percentile(samples, 99),
        p999: percentile(samples, 99.9),
        max: samples.at(-1)!,
      } satisfies Timings;
    };
    const requests = async () => ({
      rest: await time(REQUESTS, (i) => fetch(rest(i), { headers: { authorization } })),
      graphql: await time(GRAPHQL_REQUESTS, (i) =>
        fetch(`${base}/graphql`, {
          method: "POST",
          headers: { authorization, "content-type": "application/json" },
          body: graphql(i),
        }),
      ),
    });
    /** Until a REST search of `path` answers `count` entries: the write is captured and projected. */
    const captured = (query: string, count: number) =>
      phase(
        until(async () => {
          const response = await fetch(`${base}/api/entries/${query}`, {
            headers: { authorization },
          });
          if (!response.ok) return false;
          const body = (await response.json()) as { nodes: unknown[] };
          return body.nodes.length === count;
        }),
      );
    // Every request once before the first phase: the server's and PostgreSQL's caches warm.
    if (!LAG_ONLY) await phase(requests());

    const rows: { what: string; timings: { rest: Timings; graphql: Timings } }[] = [];
    const measured = async (what: string) => {
      process.stderr.write(`bench: tail: ${what}\n`);
      if (LAG_ONLY) return;
      const timings = await phase(requests());
      rows.push({ what, timings });
      process.stderr.write(
        `bench: tail:   REST p99 ${fmt(timings.rest.p99, 1)} p99.9 ${fmt(timings.rest.p999, 1)} ms; GraphQL p99 ${fmt(timings.graphql.p99, 1)} p99.9 ${fmt(timings.graphql.p999, 1)} ms\n`,
      );
    };

    const marker = `tail-${Date.now()}`;
    await directory.modify(people[1]!.dn, [
      { operation: "replace", attribute: "title", values: marker },
    ]);
    await captured(`users?filter=${encodeURIComponent(`title eq "${marker}"`)}`, 1);
    await measured("after a small write (one person's title)");

    const everyone = `cn=tail-everyone,ou=groups,${SLAPD_BASE}`;
    const members = people.map((p) => p.dn);
    await directory.add(everyone, {
      objectClass: ["groupOfNames"],
      cn: "tail-everyone",
      member: members,
    });
    await captured(`groups?filter=${encodeURIComponent('cn eq "tail-everyone"')}`, 1);
    await measured(`after the add of a group of all ${fmt(members.length)} people`);

    await directory.modify(everyone, [
      { operation: "delete", attribute: "member", values: [members[0]!] },
    ]);
    await captured(
      `groups?filter=${encodeURIComponent(`(&(cn=tail-everyone)(!(member=${members[0]!})))`)}`,
      1,
    );
    await measured("after one member left that group (its record holds the old entry)");

    // Capture lag through the REST channel: a write to the directory, then a REST search
    // for what it wrote, asked every 2 ms until it answers; one write at a time. Each write's
    // event's recorded_at (the append's statement's time, the database's clock on this same
    // machine) splits the lag into capture's part and the projection's and the request's.
    // Every projection has applied the writes above first: entry_versions applied the group
    // of everyone's versions for over a minute at 100,000 on the busy machine, the lag's
    // writes under way beside it.
    const lagsFrom = await readHead(db.pool);
    for (const projection of allProjections) {
      await phase(waitForProjection(db.pool, projection.name, lagsFrom, 3_600_000));
    }
    process.stderr.write(`bench: tail: capture lag of ${fmt(LAG_WRITES)} writes\n`);
    const writes: { title: string; written: number; seen: number }[] = [];
    for (let i = 0; i < LAG_WRITES; i++) {
      const title = `lag-${i}-${Date.now()}`;
      const written = performance.timeOrigin + performance.now();
      await directory.modify(people[2 + (i % (people.length - 2))]!.dn, [
        { operation: "replace", attribute: "title", values: title },
      ]);
      const search = `${base}/api/entries/users?filter=${encodeURIComponent(`title eq "${title}"`)}`;
      await phase(
        (async () => {
          for (;;) {
            const response = await fetch(search, { headers: { authorization } });
            const body = (await response.json()) as { nodes?: unknown[] };
            if (body.nodes?.length === 1) return;
            await new Promise((resolve) => setTimeout(resolve, 2));
          }
        })(),
      );
      writes.push({ title, written, seen: performance.timeOrigin + performance.now() });
    }
    // The same again for other people, but without asking annal: annal's REST searches, asked
    // every 2 ms, are a load of their own on the way they measure (its event loop, the pool,
    // PostgreSQL). The database is asked every 2 ms instead for the row the REST search reads
    // (one indexed read, no request to annal); the change has reached REST once it is there.
    const quiet: number[] = [];
    for (let i = 0; i < LAG_WRITES; i++) {
      const title = `lag-quiet-${i}-${Date.now()}`;
      const dn = people[2 + LAG_WRITES + (i % (people.length - 2 - LAG_WRITES))]!.dn;
      const written = performance.timeOrigin + performance.now();
      await directory.modify(dn, [{ operation: "replace", attribute: "title", values: title }]);
      await phase(
        (async () => {
          for (;;) {
            const { rowCount } = await db.pool.query(
              `SELECT 1 FROM ${ENTRIES_TABLE} WHERE dn_norm = $1 AND attributes->'title' ? $2`,
              [normalizeDN(dn), title],
            );
            if (rowCount) return;
            await new Promise((resolve) => setTimeout(resolve, 2));
          }
        })(),
      );
      quiet.push(performance.timeOrigin + performance.now() - written);
    }
    quiet.sort((a, b) => a - b);
    const recordedAt = await recordedTimes(
      store,
      lagsFrom,
      writes.map((w) => w.title),
    );
    const lags = writes.map((w) => w.seen - w.written).sort((a, b) => a - b);
    const toLog = writes
      .map((w) => (recordedAt.get(w.title) ?? Number.NaN) - w.written)
      .sort((a, b) => a - b);
    const fromLog = writes
      .map((w) => w.seen - (recordedAt.get(w.title) ?? Number.NaN))
      .sort((a, b) => a - b);
    const lagLine = (values: number[]) =>
      `p50 ${fmt(percentile(values, 50), 1)} ms, p99 ${fmt(percentile(values, 99), 1)} ms, max ${fmt(values.at(-1)!, 1)} ms`;
    process.stderr.write(
      `bench: tail:   lag ${lagLine(lags)}; to the log ${lagLine(toLog)}; from the log to REST ${lagLine(fromLog)}; unasked ${lagLine(quiet)}\n`,
    );

    const [small, ...large] = rows;
    const worst = (key: "rest" | "graphql") =>
      Math.max(...large.map((row) => row.timings[key].p99 / small!.timings[key].p99));
    const line = (what: string, t: Timings) =>
      `| ${what} | ${fmt(t.p50, 1)} | ${fmt(t.p99, 1)} | ${fmt(t.p999, 1)} | ${fmt(t.max, 1)} |`;
    const lagText = `Capture lag through the REST channel, after the writes above and once every projection has applied them: ${fmt(LAG_WRITES)} writes of one person's
\`title\`, one at a time, each from the directory's answer to the first REST search (asked every
2 ms) that finds it: ${lagLine(lags)}
(bound: p99 under ${LAG_BOUND_MS} ms; ${percentile(lags, 99) < LAG_BOUND_MS ? "met" : "not met"}). Its parts: from the write to its event's \`recorded_at\` (the
append's statement; the accesslog watch hands capture each write's record as slapd logs it)
${lagLine(toLog)}; from there to the REST search that finds it ${lagLine(fromLog)}. The same
for ${fmt(LAG_WRITES)} more writes, without REST searches while they wait (annal's searches, asked every 2 ms, are a load
on the way they measure): the database asked every 2 ms for the row the search reads, until it
holds the write: ${lagLine(quiet)}.`;
    if (LAG_ONLY) {
      const markdown = `## Capture lag through REST${LARGE ? `, ${fmt(ENTRIES)} entries` : ""}

Command: \`npm run bench -- tail --lag-only${sizeOption()}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}; OpenLDAP slapd from Debian, on loopback.

\`annal start\` as a process of its own (\`NODE_ENV=production\`, the default settings, capture
from the accesslog with its watch) over ${fmt(ENTRIES)} people, after its first start, the add of
a group of every person and one member's leaving it (the writes of \`npm run bench -- tail\`,
without its requests). ${lagText}`;
      recordResults(LARGE ? `tail-lag-${ENTRIES}` : "tail-lag", markdown);
      process.stdout.write(`${markdown}\n`);
      return;
    }
    const markdown = `## Request tails after a large write${LARGE ? `, ${fmt(ENTRIES)} entries` : ""}

Command: \`npm run bench -- tail${sizeOption()}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}; OpenLDAP slapd from Debian, on loopback.

\`annal start\` as a process of its own (\`NODE_ENV=production\`, the default settings, capture
from the accesslog with its watch) over ${fmt(ENTRIES)} people, after its first start. The same
requests, one at a time, after each write: ${fmt(REQUESTS)} REST searches \`GET
/api/entries/users?filter=uid eq "<uid>"\` (one person of all) and ${fmt(GRAPHQL_REQUESTS)} GraphQL
queries \`{ person(by: { uid: "<uid>" }) { uid displayName mail } }\` (the demo's schema),
each with a bearer token; times in ms from the client, the baseline the first row.

| REST search, after | p50 | p99 | p99.9 | max |
|---|---:|---:|---:|---:|
${rows.map((row) => line(row.what, row.timings.rest)).join("\n")}

| GraphQL query, after | p50 | p99 | p99.9 | max |
|---|---:|---:|---:|---:|
${rows.map((row) => line(row.what, row.timings.graphql)).join("\n")}

p99 after a large write against after the small write, the worst of the two large rows: REST
${fmt(worst("rest"), 2)}×, GraphQL ${fmt(worst("graphql"), 2)}× (bound: ${RATIO_BOUND}×; ${Math.max(worst("rest"), worst("graphql")) <= RATIO_BOUND ? "met" : "not met"}). The REST search's p99
${fmt(Math.max(...rows.map((row) => row.timings.rest.p99)), 1)} ms at most (bound: under ${P99_BOUND_MS} ms; ${rows.every((row) => row.timings.rest.p99 < P99_BOUND_MS) ? "met" : "not met"}).

${lagText}`;
    recordResults(LARGE ? `tail-${ENTRIES}` : "tail", markdown);
    process.stdout.write(`${markdown}\n`);
  } finally {
    await server.stop();
    await db.close();
    await sample.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** When the event of each write (told by its title) was recorded: its append's statement's time. */
async function recordedTimes(
  store: EventStore,
  after: LogPosition,
  titles: readonly string[],
): Promise<Map<string, number>> {
  const wanted = new Set(titles);
  const found = new Map<string, number>();
  let position = after;
  for (;;) {
    const page = await store.readAll({ after: position, limit: 1000 });
    for (const event of page.events) {
      const title = /"(lag-\d+-\d+)"/.exec(JSON.stringify(event.data))?.[1];
      if (title && wanted.has(title) && !found.has(title)) {
        found.set(title, event.recordedAt.getTime());
      }
    }
    if (page.events.length < 1000) return found;
    position = page.position;
  }
}
