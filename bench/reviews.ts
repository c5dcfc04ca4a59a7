import { mkdtempSync, rmSync } from "node:fs";
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
import { startAnnalProcess, until } from "./annal-process.ts";
import {
  benchDatabase,
  benchSize,
  fmt,
  machine,
  percentile,
  recordResults,
  sizeOption,
  time,
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
  const db = await benchDatabase();
  const dir = mkdtempSync(path.join(os.tmpdir(), "annal-bench-reviews-"));
  const annal = await startAnnalProcess({
    sample,
    db,
    dir,
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
    ).then((json) => {
      answerSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
      return json;
    });
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
    const listedAt = await db.pool.query<{ seconds: number }>(
      `SELECT extract(epoch FROM recorded_at - $1) AS seconds FROM events
        WHERE type = 'ReviewCampaignStarted'`,
      [before.rows[0]!.at],
    );
    await Promise.race([
      until(async () => {
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
      }),
      annal.ended,
    ]);
    const dialogsSeconds = Number(process.hrtime.bigint() - t0) / 1e9;
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
    const pageRun = await measure(page);
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
process, its first import ${fmt(importSeconds, 1)} s until \`/readyz\`. The campaign is started
with the \`startReview\` mutation (one reviewer, \`service:${REVIEWER}\`, for every item); it is
created once every item is listed in the reviews projection and has its instance of
\`annal.review-item\`. The mutation ${mutationNote}.

| measure | value |
| --- | ---: |
| campaign created: items listed and every instance started (s) | ${fmt(createSeconds, 1)} |
| of which reading the items from the history, until \`ReviewCampaignStarted\` is recorded (s) | ${fmt(Number(listedAt.rows[0]!.seconds), 1)} |
| of which until the last instance's \`WorkflowStarted\` is recorded (s) | ${fmt(Number(instancesAt.rows[0]!.seconds), 1)} |
| the \`startReview\` mutation's answer (s) | ${fmt(answerSeconds, 1)} |
| every item's dialog opened by the engine (s) | ${fmt(dialogsSeconds, 1)} |
| reviewer's page of 100 (GraphQL, as the review view asks it): p50 / p99 (ms) | ${fmt(pageRun.p50, 1)} / ${fmt(pageRun.p99, 1)} |
| the same 100 rows by a raw SELECT of the projection: p50 / p99 (ms) | ${fmt(rawRun.p50, 1)} / ${fmt(rawRun.p99, 1)} |

${REQUESTS} requests each after ${WARMUP} unmeasured, one at a time, once every item's dialog is
open (the engine idle again).
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
