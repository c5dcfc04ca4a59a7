import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { createToken } from "../src/auth/index.ts";
import { createDirectoryClient } from "../src/directory/index.ts";
import {
  baseEntries,
  launchSlapd,
  SLAPD_BASE,
  SLAPD_ROOT_DN,
  toLdifChunks,
} from "../src/slapd/index.ts";
import { EventStore } from "../src/store/index.ts";
import { readersIndexesBuilt, startAnnalProcess, until } from "./annal-process.ts";
import { allProjections } from "../projections/index.ts";
import { waitForProjection } from "../src/projector/index.ts";
import { itemsQuery, readItems } from "../src/reviews/index.ts";
import {
  benchDatabase,
  benchSize,
  fmt,
  machine,
  percentile,
  recordResults,
  sizeOption,
  time,
  type BenchDatabase,
  type SampleDirectory,
} from "./support.ts";

/** People in the directory (`--size 1m`). */
const PEOPLE = benchSize(100_000);
/** Memberships in the campaign's scope: groups of `GROUP_SIZE`, people taken in turn. */
const MEMBERSHIPS = optionNumber("--memberships", 100_000);
const GROUP_SIZE = 100;
const GROUPS = Math.ceil(MEMBERSHIPS / GROUP_SIZE);
/** Groups beside the scope's (not reviewed): the filter must pass over them. */
const OTHER_GROUPS = 50;
const REQUESTS = 300;
const WARMUP = 30;
const PEOPLE_BASE = `ou=people,${SLAPD_BASE}`;
const GROUPS_BASE = `ou=groups,${SLAPD_BASE}`;
const REVIEWER = "reviewer";
/** The review view's page, as src/web/client/pages/reviews.ts asks it. */
const ITEM_FIELDS = `id group member accessFunction since heldDays
  began { kind by workflow instanceId position } lastReview { decision decidedAt by }
  state overdue escalated decision reason decidedBy { name dn } decidedAt
  revocation revocationError { code message } directoryChange { position }`;
const PAGE_QUERY = `query($id: ID!, $group: String, $member: String, $overdue: Boolean, $first: Int, $after: String) {
  reviewCampaign(id: $id) { items(mine: true, state: open, group: $group, member: $member, overdue: $overdue, first: $first, after: $after) {
    nodes { ${ITEM_FIELDS} } pageInfo { hasNextPage endCursor } } } }`;

function optionNumber(name: string, fallback: number): number {
  const index = process.argv.indexOf(name);
  if (index < 0) return fallback;
  const text = (process.argv[index + 1] ?? "").toLowerCase();
  const match = /^(\d+)([km]?)$/.exec(text);
  if (!match) throw new Error(`${name} ${text}: expected a number such as 100k`);
  return Number(match[1]) * (match[2] === "m" ? 1_000_000 : match[2] === "k" ? 1000 : 1);
}

/**
 * `--profile <dir>`: a CPU profile of \`annal start\` (\`--cpu-prof\`, written at its exit) and
 * the statements of the benchmark's own PostgreSQL (\`pg_stat_statements\`, the 40 of most
 * time, written once every dialog is open) into `<dir>`.
 */
const PROFILE_DIR = process.argv.includes("--profile")
  ? path.resolve(process.argv[process.argv.indexOf("--profile") + 1] ?? "")
  : undefined;

/**
 * `--heap <dir>`: a sampling heap profile of \`annal start\` (\`--heap-prof\`, written at its exit)
 * and two heap snapshots of it into `<dir>`: once its first import is recorded and its
 * readers' indexes built, and once the campaign's items are recorded (its instances starting).
 */
const HEAP_DIR = process.argv.includes("--heap")
  ? path.resolve(process.argv[process.argv.indexOf("--heap") + 1] ?? "")
  : undefined;

/**
 * Asks the process for a heap snapshot and waits until it is written: its file is there and
 * the process answers again (it writes the snapshot on its main thread).
 */
async function heapSnapshot(annal: { pid: number; base: string }, dir: string): Promise<void> {
  const count = () => readdirSync(dir).filter((name) => name.endsWith(".heapsnapshot")).length;
  const before = count();
  process.kill(annal.pid, "SIGUSR2");
  await until(async () => count() > before, 1000);
  await until(
    async () => (await fetch(`${annal.base}/healthz`).catch(() => undefined))?.ok === true,
    1000,
  );
}

const person = (i: number) => `uid=user${i},${PEOPLE_BASE}`;

/** slapd with `PEOPLE` people, `GROUPS` groups of `GROUP_SIZE` in scope, a few others. */
async function seedDirectory(): Promise<SampleDirectory> {
  const password = randomBytes(12).toString("base64url");
  process.stderr.write(
    `bench: reviews: seeding slapd with ${fmt(PEOPLE)} people, ${fmt(GROUPS)} groups of ${GROUP_SIZE}\n`,
  );
  let next = 0;
  const members = () => Array.from({ length: GROUP_SIZE }, () => person(next++ % PEOPLE));
  const slapd = await launchSlapd({
    dir: mkdtempSync(path.join(os.tmpdir(), "annal-bench-slapd-")),
    rootPassword: password,
    seedLdif: () =>
      toLdifChunks([
        ...baseEntries(),
        ...Array.from({ length: PEOPLE }, (_, i) => ({
          dn: person(i),
          attributes: {
            objectClass: ["inetOrgPerson"],
            uid: [`user${i}`],
            cn: [`User ${i}`],
            sn: [`Number${i}`],
          },
        })),
        ...Array.from({ length: GROUPS }, (_, g) => ({
          dn: `cn=team-${g},${GROUPS_BASE}`,
          attributes: {
            objectClass: ["groupOfNames"],
            cn: [`team-${g}`],
            owner: [person(g % PEOPLE)],
            member: members(),
          },
        })),
        ...Array.from({ length: OTHER_GROUPS }, (_, g) => ({
          dn: `cn=other-${g},${GROUPS_BASE}`,
          attributes: {
            objectClass: ["groupOfNames"],
            cn: [`other-${g}`],
            member: [person(g % PEOPLE)],
          },
        })),
      ]),
    removeOnStop: true,
    startTimeoutMs: 600_000,
  });
  const client = createDirectoryClient({
    url: slapd.url,
    bindDN: SLAPD_ROOT_DN,
    password,
    timeoutMs: 60_000,
  });
  return {
    url: slapd.url,
    bindDN: SLAPD_ROOT_DN,
    password,
    people: [],
    client,
    pid: slapd.pid,
    async close() {
      await client.close();
      await slapd.stop();
    },
  };
}

/**
 * `npm run bench -- reviews [--size N] [--memberships M]`: a campaign over `M` memberships
 * (default 100,000: groups of 100) in a directory of `N` people (default 100,000), run by
 * `annal start` as a process after its first import: (a) the time `startReview` takes until
 * every item is listed in the reviews projection and has its instance of `annal.review-item`,
 * with its two parts (reading the items from the history until `ReviewCampaignStarted` is
 * recorded; starting the instances); (b) a reviewer's page of 100 open items as the web
 * application's review view asks it (`items(mine: true, state: open, first: 100)`), p50/p99,
 * beside a raw SELECT of the same 100 rows from the projection.
 */
export async function reviewsBenchmark(): Promise<void> {
  const sample = await seedDirectory();
  const db = await benchDatabase(
    PROFILE_DIR
      ? { shared_preload_libraries: "pg_stat_statements", "pg_stat_statements.track": "all" }
      : {},
  );
  if (PROFILE_DIR) {
    mkdirSync(PROFILE_DIR, { recursive: true });
    await db.pool.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), "annal-bench-reviews-"));
  const annal = await startAnnalProcess({
    sample,
    db,
    dir,
    ...(PROFILE_DIR ? { cpuProfileDir: PROFILE_DIR } : {}),
    ...(HEAP_DIR ? { heapDir: HEAP_DIR } : {}),
    toml: `[[reviews]]
name = "teams"
title = "Teams"
scope = { groups = "(cn=team-*)", base = "${GROUPS_BASE}" }
reviewers = { by = "group", group = "service:${REVIEWER}" }
deadline = "10d"
`,
  });
  try {
    process.stderr.write("bench: reviews: annal's first import\n");
    const importSeconds = await time(() =>
      Promise.race([
        until(
          async () => (await fetch(`${annal.base}/readyz`).catch(() => undefined))?.ok === true,
        ),
        annal.ended,
      ]),
    );
    // The first start's readers' indexes, built after `/readyz`, are not the campaign's work.
    await Promise.race([until(async () => readersIndexesBuilt(annal.log), 1000), annal.ended]);
    if (PROFILE_DIR) await db.pool.query("SELECT pg_stat_statements_reset()");
    if (HEAP_DIR) {
      mkdirSync(HEAP_DIR, { recursive: true });
      process.stderr.write("bench: reviews: a heap snapshot after the first import\n");
      await heapSnapshot(annal, HEAP_DIR);
    }
    const store = await EventStore.open(db.pool);
    const bearer = async (name: string, access: string[]) =>
      `Bearer ${(await createToken(db.pool, store, { name, access: access as never })).token}`;
    const operator = await bearer("bench-operator", ["operator"]);
    const reviewer = await bearer(REVIEWER, []);
    const graphql = async (authorization: string, query: string, variables?: unknown) => {
      const response = await fetch(`${annal.base}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization },
        body: JSON.stringify({ query, variables }),
      });
      return (await response.json()) as { data?: any; errors?: { message: string }[] }; // eslint-disable-line @typescript-eslint/no-explicit-any
    };

    process.stderr.write(`bench: reviews: starting a campaign of ${fmt(MEMBERSHIPS)} items\n`);
    const before = await db.pool.query<{ at: Date }>("SELECT clock_timestamp() AS at");
    const t0 = process.hrtime.bigint();
    let answerSeconds = Number.NaN;
    const answer = graphql(
      operator,
      `
        mutation {
          startReview(review: "teams") {
            id
          }
        }
      `,
    )
      .then((json) => {
        answerSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
        return json;
      })
      .catch((error: unknown) => ({
        // fetch gives up on an answer after 300 s (undici's headers timeout): the campaign
        // goes on all the same, and is measured from the log and the projection.
        errors: [{ message: `no answer: ${String((error as Error).cause ?? error)}` }],
      }));
    let campaignId: string | undefined;
    await Promise.race([
      until(async () => {
        const found = await db.pool.query<{ id: string }>(
          `SELECT data->>'campaignId' AS id FROM events WHERE type = 'ReviewCampaignStarted'`,
        );
        campaignId = found.rows[0]?.id;
        return campaignId !== undefined;
      }),
      annal.ended,
    ]);
    if (HEAP_DIR) {
      process.stderr.write("bench: reviews: a heap snapshot while the instances start\n");
      await heapSnapshot(annal, HEAP_DIR);
    }
    const listedAt = await db.pool.query<{ seconds: number }>(
      `SELECT extract(epoch FROM recorded_at - $1) AS seconds FROM events
        WHERE type = 'ReviewCampaignStarted'`,
      [before.rows[0]!.at],
    );
    await Promise.race([
      until(async () => {
        // Two look-ups by index (the last item listed, none without its instance) before the
        // count: a count of 100,000 rows every 100 ms took a core from what it measured.
        const listed = await db.pool.query<{ done: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM projection_reviews.review_items
                           WHERE campaign_id = $1 AND ordinal = $2)
              AND NOT EXISTS (SELECT 1 FROM projection_reviews.review_items
                               WHERE campaign_id = $1 AND instance_id IS NULL) AS done`,
          [campaignId, MEMBERSHIPS - 1],
        );
        if (!listed.rows[0]!.done) return false;
        const found = await db.pool.query<{ n: number; started: number }>(
          `SELECT count(*)::int AS n, count(instance_id)::int AS started
             FROM projection_reviews.review_items WHERE campaign_id = $1`,
          [campaignId],
        );
        const row = found.rows[0]!;
        return row.n === MEMBERSHIPS && row.started === MEMBERSHIPS;
      }),
      annal.ended,
    ]);
    const createSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const instancesAt = await db.pool.query<{ seconds: string }>(
      `SELECT extract(epoch FROM max(recorded_at) - $1) AS seconds FROM events
        WHERE type = 'WorkflowStarted' AND data->'parameters'->>'campaignId' = $2`,
      [before.rows[0]!.at, campaignId],
    );
    const answered = await answer;
    // The reviewer's steady state: the engine has run every item's instance to its dialog.
    process.stderr.write("bench: reviews: waiting for every item's dialog\n");
    await Promise.race([
      until(async () => {
        const found = await db.pool.query<{ n: number }>(
          `SELECT count(dialog_id)::int AS n FROM projection_reviews.review_items
            WHERE campaign_id = $1`,
          [campaignId],
        );
        return found.rows[0]!.n === MEMBERSHIPS;
      }, 1000),
      annal.ended,
    ]);
    const dialogsSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    // The page is measured in the steady state: every projection has applied the campaign
    // (the workflows projection's 200,000 events came after the reviews projection's).
    const head = await store.head();
    for (const projection of allProjections) {
      await Promise.race([
        waitForProjection(db.pool, projection.name, head, 3_600_000),
        annal.ended,
      ]);
    }
    const caughtUpSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
    if (PROFILE_DIR) await writeStatements(db, path.join(PROFILE_DIR, "statements.txt"));
    // What the campaign's start recorded, stored (pg_column_size: after TOAST's compression)
    // and as JSON text, per item: its stream's events and its items' instances' events.
    const recorded = await db.pool.query<{ type: string; n: number; stored: string; text: string }>(
      `SELECT e.type, count(*)::int AS n, sum(pg_column_size(e.data) + pg_column_size(e.metadata))::bigint AS stored,
              sum(octet_length(e.data::text) + octet_length(e.metadata::text))::bigint AS text
         FROM events AS e
        WHERE e.stream_id = 'review-campaign-' || $1::text
           OR e.stream_id IN (SELECT 'workflow-' || i.instance_id::text FROM projection_reviews.review_items AS i
                               WHERE i.campaign_id = $1::uuid AND i.instance_id IS NOT NULL)
        GROUP BY e.type ORDER BY e.type`,
      [campaignId],
    );
    const perItem = (column: "stored" | "text") =>
      recorded.rows.reduce((sum, row) => sum + Number(row[column]), 0) / MEMBERSHIPS;
    const byType = recorded.rows
      .map((row) => `${row.type} ${fmt(row.n)}: ${fmt(Number(row.stored) / row.n, 0)} B`)
      .join("; ");
    process.stderr.write(
      `bench: reviews: recorded per item ${fmt(perItem("stored"), 0)} B stored, ${fmt(perItem("text"), 0)} B of JSON text (${byType})\n`,
    );
    const mutationNote = answered.errors
      ? `answered with an error: ${answered.errors[0]?.message}`
      : "answered with the campaign";

    process.stderr.write("bench: reviews: the reviewer's page\n");
    const page = async () => {
      const json = await graphql(reviewer, PAGE_QUERY, { id: campaignId, first: 100 });
      if (json.errors || json.data?.reviewCampaign?.items.nodes.length !== 100) {
        throw new Error(`bad answer: ${JSON.stringify(json).slice(0, 300)}`);
      }
    };
    const raw = async () => {
      const found = await db.pool.query(
        `SELECT * FROM projection_reviews.review_items
          WHERE campaign_id = $1 AND state = 'open' ORDER BY ordinal LIMIT 100`,
        [campaignId],
      );
      if (found.rows.length !== 100) throw new Error(`raw read ${found.rows.length}`);
    };
    // The page's own statement (readItems, as the gateway makes it for the reviewer's keys):
    // what the page costs beyond its SQL is the gateway's.
    const keys = await db.pool.query<{ assignees: string[] }>(
      `SELECT assignees FROM projection_reviews.review_items WHERE campaign_id = $1 LIMIT 1`,
      [campaignId],
    );
    const pageSql = async () => {
      const found = await readItems(db.pool, campaignId!, new Date(), {
        state: "open",
        assignedTo: keys.rows[0]!.assignees,
        first: 101,
      });
      if (found.length !== 101) throw new Error(`readItems read ${found.length}`);
    };
    // Its plan, as the page's last run found it.
    const pageFilter = {
      state: "open" as const,
      assignedTo: keys.rows[0]!.assignees,
      first: 101,
    };
    const statement = itemsQuery(campaignId!, new Date(), pageFilter);
    const plan = await db.pool.query<{ "QUERY PLAN": string }>(
      `EXPLAIN (ANALYZE, BUFFERS) ${statement.text}`,
      statement.values,
    );
    process.stderr.write(
      `bench: reviews: the page's statement:\n${plan.rows.map((row) => row["QUERY PLAN"]).join("\n")}\n`,
    );
    const pageRun = await measure(page);
    const sqlRun = await measure(pageSql);
    const rawRun = await measure(raw);
    const load = os
      .loadavg()
      .map((l) => fmt(l, 1))
      .join(", ");

    recordResults(
      "reviews",
      `## Access reviews: a campaign of ${fmt(MEMBERSHIPS)} memberships over ${fmt(PEOPLE)} people

Command: \`npm run bench -- reviews${sizeOption()}${process.argv.includes("--memberships") ? ` --memberships ${process.argv[process.argv.indexOf("--memberships") + 1]}` : ""}\` (run ${new Date().toISOString().slice(0, 10)})
Machine: ${machine()}; OpenLDAP slapd from Debian, on loopback; shared with other
engineers' work and tests (load average at the end: ${load}).

A directory of ${fmt(PEOPLE)} people and ${fmt(GROUPS + OTHER_GROUPS)} groups, ${fmt(GROUPS)} of
them (\`cn=team-*\`, ${GROUP_SIZE} members each) in the campaign's scope; \`annal start\` as a
process, its first import ${fmt(importSeconds, 1)} s until \`/readyz\` (the campaign starts once
its readers' indexes are built). The campaign is started
with the \`startReview\` mutation (one reviewer, \`service:${REVIEWER}\`, for every item); it is
created once every item is listed in the reviews projection and has its instance of
\`annal.review-item\`. The mutation ${mutationNote}.

| measure | value |
| --- | ---: |
| campaign created: items listed and every instance started (s) | ${fmt(createSeconds, 1)} |
| of which reading the items from the history, until \`ReviewCampaignStarted\` is recorded (s) | ${fmt(Number(listedAt.rows[0]!.seconds), 1)} |
| of which until the last instance's \`WorkflowStarted\` is recorded (s) | ${fmt(Number(instancesAt.rows[0]!.seconds), 1)} |
| the \`startReview\` mutation's answer (s) | ${fmt(answerSeconds, 1)} |
| every item's dialog open in the reviews projection, each item decidable (s) | ${fmt(dialogsSeconds, 1)} |
| every projection caught up with the campaign (s) | ${fmt(caughtUpSeconds, 1)} |
| the campaign's events per item, stored / as JSON text (bytes) | ${fmt(perItem("stored"), 0)} / ${fmt(perItem("text"), 0)} |
| reviewer's page of 100 (GraphQL, as the review view asks it): p50 / p99 (ms) | ${fmt(pageRun.p50, 1)} / ${fmt(pageRun.p99, 1)} |
| the page's statement (\`readItems\` with the reviewer's keys, its joins): p50 / p99 (ms) | ${fmt(sqlRun.p50, 1)} / ${fmt(sqlRun.p99, 1)} |
| the same 100 rows by a raw SELECT of the projection: p50 / p99 (ms) | ${fmt(rawRun.p50, 1)} / ${fmt(rawRun.p99, 1)} |

${REQUESTS} requests each after ${WARMUP} unmeasured, one at a time, once every projection has
caught up with the campaign. The events by type (count: stored bytes each): ${byType}.
`,
    );
  } finally {
    await annal.stop();
    await db.close();
    await sample.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function measure(run: () => Promise<void>): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < WARMUP; i++) await run();
  const samples: number[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const start = process.hrtime.bigint();
    await run();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

/** The 40 statements of most total time since the campaign's start (`--profile`). */
async function writeStatements(db: BenchDatabase, file: string): Promise<void> {
  const top = await db.pool.query<{ ms: number; calls: number; mean: number; query: string }>(
    `SELECT round(total_exec_time)::int AS ms, calls::int, round(mean_exec_time::numeric, 3)::float AS mean,
            regexp_replace(query, '\\s+', ' ', 'g') AS query
       FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 40`,
  );
  writeFileSync(
    file,
    top.rows
      .map((r) => `${r.ms} ms\t${r.calls} calls\t${r.mean} ms\t${r.query.slice(0, 400)}`)
      .join("\n") + "\n",
  );
}
