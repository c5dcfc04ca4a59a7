import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import pino from "pino";
import t, { type Test } from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { loadConfig } from "../../src/config/index.ts";
import { entryAt } from "../../src/history/index.ts";
import { freePort } from "../../src/ports.ts";
import { waitForProjection } from "../../src/projector/index.ts";
import { logOrder } from "../../src/store/index.ts";
import { publishedSigningKeys } from "../../src/audit/index.ts";
import { createToken } from "../../src/auth/index.ts";
import { quarterOf, scheduledCampaignId } from "../../src/reviews/index.ts";
import { loadInstance } from "../../src/workflow/index.ts";
import { allProjections } from "../../projections/index.ts";
import { REVIEW_ITEMS } from "../../projections/reviews/index.ts";
import { WORKFLOW_INSTANCES } from "../../projections/workflows/tables.ts";
import { runAnnal } from "../cli/support.ts";
import { launchChromium, withoutChromium } from "../support/browser.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * The demo as `npm start` runs it (ops/demo/annal.toml: its own slapd with the demo
 * organisation and its seeded past, its workflows and calendar), on the test's database and
 * free ports: the first start seeds past access requests run by the deployed engine, and the
 * README's simulation command, run exactly as written, reports them beside what a changed
 * approval rule would have done. It seeds last quarter's access review, finished, and this
 * quarter's, open, run by annal's own reviews: `annal review list` shows both, the finished
 * one's signed report verifies, and a revoked membership's change names its item's revocation.
 */

t.setTimeout(900_000);

const REPO = path.resolve(import.meta.dirname, "../..");
const SCREENSHOTS = process.env["ANNAL_SCREENSHOTS"] ?? path.join(REPO, "docs/screenshots");
const README = readFileSync(path.join(REPO, "README.md"), "utf8");
const MARK = "<!-- test/demo/seeded-simulation.test.ts runs this command -->";

/** The README's marked command, as its words (one line; `npm run annal --` left out). */
function readmeCommand(): string[] {
  const after = README.slice(README.indexOf(MARK) + MARK.length);
  const line = after.split("\n").find((l) => l.startsWith("npm run annal -- simulate "));
  if (README.indexOf(MARK) < 0 || !line) throw new Error("the README's marked command is gone");
  return line
    .replace("npm run annal -- ", "")
    .split(/\s+/)
    .filter((word) => word !== "");
}

const dir = t.testdir({});
const db = await testDatabase(t);
const ldapPort = await freePort();
const demoToml = readFileSync(path.join(REPO, "ops/demo/annal.toml"), "utf8")
  .replace(/^port = 4173.*$/m, `port = ${await freePort()}`)
  .replace(/^dataDir = "\.annal" .*$/m, `url = "${db.url}"`)
  .replace("ldap://127.0.0.1:3890", `ldap://127.0.0.1:${ldapPort}`)
  .replace(/^port = 3890$/m, `port = ${ldapPort}`)
  .replace(/^dataDir = "\.annal\/slapd"$/m, `dataDir = "${path.join(dir, "slapd")}"`)
  .replaceAll("127.0.0.1:4174", `127.0.0.1:${await freePort()}`)
  .replaceAll("2525", String(await freePort()))
  .replace(/"([^"]+)" # beside this file/g, (_, file: string) =>
    JSON.stringify(path.join(REPO, "ops/demo", file)),
  )
  .replace(
    /\["gateway\/\*\.graphql"\]/,
    JSON.stringify([path.join(REPO, "ops/demo/gateway/*.graphql")]),
  );
const configPath = path.join(dir, "annal.toml");
writeFileSync(configPath, fixOidcPort(demoToml));

/** The demo OpenID provider's port where its issuer says it is. */
function fixOidcPort(toml: string): string {
  const issuer = /issuer = "http:\/\/127\.0\.0\.1:(\d+)"/.exec(toml)![1]!;
  return toml.replace(/^\[auth\.oidc\.demo\]\nport = \d+$/m, `[auth.oidc.demo]\nport = ${issuer}`);
}

const env = { LDAP_PASSWORD: "annal-demo" };
const config = await loadConfig({ configPath, cwd: dir, env });
const started = Date.now();
const logLines: { msg?: string; ms?: number; level?: number }[] = [];
const log = pino(
  { level: "info" },
  { write: (line: string) => void logLines.push(JSON.parse(line) as (typeof logLines)[0]) },
);
const annal = await startAnnal({ config, log });
t.teardown(() => annal.stop());
const pool = db.pool;

t.test("the first start seeds past access requests, as the deployed engine ran them", async (t) => {
  t.comment(`the demo started in ${Date.now() - started} ms`);
  // The past is written by capture's first import, which the start sets going.
  await eventually(
    async () =>
      (await pool.query("SELECT 1 FROM events WHERE type = 'EntrySnapshot' LIMIT 1")).rowCount ||
      undefined,
    { what: "the first import, after the seeded past", timeout: 240_000 },
  );
  const enacted = logLines.find((line) => line.msg === "past access requests enacted");
  t.comment(`the first import was under way ${Date.now() - started} ms after the start`);
  t.comment(`the past requests took ${enacted?.ms} ms of it`);
  t.same(
    logLines.filter((line) => (line.level ?? 0) >= 40),
    [],
    "no warnings",
  );
  const head = await annal.store.head();
  for (const projection of allProjections) {
    await waitForProjection(pool, projection.name, head, 120_000);
  }
  const starts = await pool.query<{ id: string; at: Date }>(
    `SELECT e.data->>'instanceId' AS id, e.occurred_at AS at FROM events AS e
      WHERE e.type = 'WorkflowStarted' AND e.data->'definition'->>'name' = 'access-request'
      ORDER BY ${logOrder("e")}`,
  );
  t.ok(starts.rowCount! >= 8, `${starts.rowCount} past requests`);
  const day = 24 * 3600 * 1000;
  t.ok(
    starts.rows.every((row) => row.at.getTime() < Date.now() - day),
    "all in the past",
  );
  t.ok(starts.rows[0]!.at.getTime() < Date.now() - 50 * day, "spread over weeks");
  const outcomes: string[] = [];
  let escalated = 0;
  for (const { id } of starts.rows) {
    const state = await loadInstance(pool, id);
    t.equal(state?.status, "COMPLETED", `${id} replays to its end`);
    const result = state?.result as { outcome: string; escalated: boolean } | undefined;
    outcomes.push(result?.outcome ?? "?");
    if (result?.escalated) escalated++;
  }
  t.ok(
    outcomes.includes("approved") && outcomes.includes("denied") && outcomes.includes("expired"),
  );
  t.ok(escalated >= 3, "some went up the chain");
  // The projection shows them as the log has them.
  const projected = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM ${WORKFLOW_INSTANCES} WHERE status = 'COMPLETED'`,
  );
  t.ok(projected.rows[0]!.n >= starts.rowCount!);
  // An approval's membership is a change caused by the approving step.
  const caused = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM events AS e JOIN events AS s
        ON s.id = (e.metadata->>'causationId')::uuid AND s.type = 'StepScheduled'
      WHERE e.type = 'EntryModified' AND e.metadata->>'source' = 'demo-history'
        AND s.data->>'workflow' = 'access-request'`,
  );
  t.equal(caused.rows[0]!.n, outcomes.filter((o) => o === "approved").length);
  const stories = await pool.query<{ story: string }>(
    `SELECT metadata->>'story' AS story FROM events WHERE metadata->>'story' LIKE 'access request:%'`,
  );
  t.equal(stories.rowCount, caused.rows[0]!.n);
  for (const { story } of stories.rows) {
    t.match(story, /^access request: [A-Z][^,=]+ asked for [\w-]+, approved by [A-Z][^,=]+$/);
  }
});

t.test("the README's simulation over the seeded past reports them and what differs", async (t) => {
  const args = readmeCommand();
  t.match(args.join(" "), /^simulate examples\/simulate\/\S+\.ts /);
  const run = await runAnnal([...args, "--json"], {
    cwd: REPO,
    env: { ...env, ANNAL_CONFIG: configPath },
  });
  t.equal(run.code, 0, run.stderr);
  const report = JSON.parse(run.stdout) as {
    summary: { starts: number; differing: number; writes: { deployed: number; simulated: number } };
  };
  t.comment(JSON.stringify(report.summary));
  t.ok(report.summary.starts >= 8, "every seeded request");
  t.ok(report.summary.differing > 0, "the new rule would have done otherwise");
  t.ok(report.summary.writes.deployed > report.summary.writes.simulated);
  const table = await runAnnal(args, { cwd: REPO, env: { ...env, ANNAL_CONFIG: configPath } });
  t.equal(table.code, 0, table.stderr);
  writeFileSync(path.join(dir, "report.txt"), table.stdout);
  t.comment(table.stdout);
});

interface ListedCampaign {
  campaign: { campaign_id: string; review: string; started_at: string; deadline: string };
  progress: {
    total: number;
    open: number;
    decided: number;
    undecided: number;
    kept: number;
    revoked: number;
    revocationsFailed: number;
  };
}

let listed: ListedCampaign[] | undefined;

/** The campaigns as `annal review list --json` prints them, the oldest first (asked once). */
async function listedCampaigns(t: Test): Promise<ListedCampaign[]> {
  if (listed) return listed;
  const run = await runAnnal(["review", "list", "--json"], {
    cwd: REPO,
    env: { ...env, ANNAL_CONFIG: configPath },
  });
  t.equal(run.code, 0, run.stderr);
  return (listed = (JSON.parse(run.stdout) as ListedCampaign[]).sort((a, b) =>
    a.campaign.started_at.localeCompare(b.campaign.started_at),
  ));
}

const admin = async () => {
  const { token } = await createToken(pool, annal.store, {
    name: "demo-reviews",
    access: ["read", "operator", "auditor"],
  });
  return { authorization: `Bearer ${token}`, "content-type": "application/json" };
};

t.test(
  "the first start seeds last quarter's review finished and this quarter's open, as annal ran them",
  async (t) => {
    const enacted = logLines.find((line) => line.msg === "past access reviews enacted");
    t.ok(enacted, "the past campaigns were enacted");
    t.comment(`the past campaigns took ${enacted?.ms} ms`);
    const [finished, open, ...more] = await listedCampaigns(t);
    t.same(more, [], "two campaigns: the schedule started none of its own over them");
    const now = new Date();
    t.ok(finished && open);
    if (!finished || !open) return;
    t.equal(finished.campaign.review, "quarterly-groups");
    t.equal(
      finished.campaign.campaign_id,
      scheduledCampaignId("quarterly-groups", quarterOf(new Date(finished.campaign.started_at))),
      "last quarter's was the schedule's",
    );
    t.ok(Date.parse(finished.campaign.started_at) < now.getTime() - 80 * 24 * 3600 * 1000);
    t.ok(Date.parse(finished.campaign.deadline) < now.getTime(), "its deadline is past");
    t.match(finished.progress, { open: 0, undecided: 1, revoked: 2, revocationsFailed: 0 });
    t.equal(finished.progress.decided, finished.progress.total - 1, "every item but one decided");
    t.equal(finished.progress.kept, finished.progress.total - 2, "the rest kept");
    t.ok(finished.progress.total > 10, `${finished.progress.total} items`);

    t.ok(Date.parse(open.campaign.deadline) > now.getTime(), "this quarter's is open");
    t.ok(Date.parse(open.campaign.started_at) >= quarterOf(now).getTime());
    if (quarterOf(now).getTime() !== quarterOf(new Date(finished.campaign.started_at)).getTime()) {
      t.equal(open.campaign.campaign_id, scheduledCampaignId("quarterly-groups", quarterOf(now)));
    }
    // Finance's owner decided at 08:00 UTC the day after the start: past, unless the quarter
    // (and with it the campaign) began just before the first start.
    const sitting = new Date(Date.parse(open.campaign.started_at) + 24 * 3600 * 1000);
    sitting.setUTCHours(8, 0, 0, 0);
    const decidedYet = sitting.getTime() <= now.getTime();
    t.match(open.progress, { decided: decidedYet ? 3 : 0, revoked: 0 });
    t.ok(open.progress.open > open.progress.decided, "most of it open");

    // Through GraphQL: the finished one's items, each decided by its group's owner.
    const headers = await admin();
    const answer = await fetch(`${annal.url}/graphql`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        query: `query($id: ID!) { reviewCampaign(id: $id) { title progress { decided undecided }
          items(first: 500) { nodes { group member state decision reason reviewers
            decidedBy { name } lastReview { decision } revocation directoryChange { position } } } } }`,
        variables: { id: finished.campaign.campaign_id },
      }),
    });
    const body = (await answer.json()) as {
      data?: { reviewCampaign: { items: { nodes: Record<string, unknown>[] } } };
      errors?: unknown;
    };
    t.notOk(body.errors, JSON.stringify(body.errors));
    const items = body.data!.reviewCampaign.items.nodes as {
      group: string;
      member: string;
      state: string;
      decision: string;
      reason: string | null;
      reviewers: string[];
      decidedBy: { name: string } | null;
      revocation: string | null;
      directoryChange: { position: number } | null;
    }[];
    const revoked = items.filter((item) => item.decision === "revoke");
    t.equal(revoked.length, 2);
    for (const item of revoked) {
      t.ok(item.reason, "a revocation with its reason");
      t.equal(item.revocation, "done");
      t.ok(item.directoryChange?.position, "its change recorded, with its position");
    }
    t.same(
      items.filter((item) => item.state === "decided" && !item.decidedBy),
      [],
      "every decided item names who decided it",
    );
    t.equal(items.filter((item) => item.state === "undecided").length, 1);
    // Each item's beginning names the change that made the membership by its position in
    // this log (the campaigns read their items in a scratch database's log).
    const misplaced = await pool.query<{ campaign_id: string; member_dn: string }>(
      `SELECT i.campaign_id, i.member_dn FROM ${REVIEW_ITEMS} AS i
         LEFT JOIN events AS e ON e.position = (i.began->>'position')::bigint
        WHERE e.stream_id IS DISTINCT FROM 'entry-' || i.group_uuid::text`,
    );
    t.same(misplaced.rows, [], "every item's beginning is a change of its group");
    // The revoked held their membership from the seeded past's start until then, and the
    // story still ends in the directory as it is: each group's last seeded members are those
    // the import found.
    const ends = await pool.query<{ dn: string; seeded: string[]; found: string[] }>(
      `SELECT s.data->'state'->>'dn' AS dn, l.after->'member' AS seeded,
              s.data->'state'->'attributes'->'member' AS found
         FROM events s
         JOIN LATERAL (
           SELECT data->'after'->'attributes' AS after FROM events l
            WHERE l.stream_id = s.stream_id AND l.metadata->>'source' = 'demo-history'
            ORDER BY l.stream_version DESC LIMIT 1) l ON true
        WHERE s.type = 'EntrySnapshot'
          AND s.data->'state'->>'dn' IN ('cn=finance,ou=groups,dc=example,dc=org',
                                         'cn=identity-team,ou=groups,dc=example,dc=org')`,
    );
    t.equal(ends.rowCount, 2);
    for (const row of ends.rows) t.same([...row.seeded].sort(), [...row.found].sort());
    for (const item of revoked) {
      t.notOk(
        ends.rows.some(
          (row) =>
            row.dn.toLowerCase() === item.group.toLowerCase() &&
            row.found.some((dn) => dn.toLowerCase() === item.member.toLowerCase()),
        ),
        `${item.member} is not in ${item.group} today`,
      );
    }
  },
);

t.test("the finished campaign's signed report verifies", async (t) => {
  const [finished] = await listedCampaigns(t);
  const out = path.join(dir, "report.json");
  const written = await runAnnal(
    ["review", "report", finished!.campaign.campaign_id, "--out", out],
    { cwd: REPO, env: { ...env, ANNAL_CONFIG: configPath } },
  );
  t.equal(written.code, 0, written.stderr);
  const report = JSON.parse(readFileSync(out, "utf8")) as {
    items: { decision: string | null; member: string }[];
  };
  t.equal(report.items.filter((item) => item.decision === "revoke").length, 2);
  const keys = path.join(dir, "keys.json");
  writeFileSync(keys, JSON.stringify({ keys: await publishedSigningKeys(pool) }));
  const verified = await runAnnal(["verify-export", out, `${out}.sig`, "--keys", keys], {
    cwd: REPO,
  });
  t.equal(verified.code, 0, verified.stderr);
});

t.test("a revoked membership's change, in REST, is its item's revocation step", async (t) => {
  const [finished] = await listedCampaigns(t);
  const { rows } = await pool.query<{
    group_uuid: string;
    member_dn: string;
    instance_id: string;
    decided_by: string;
  }>(
    `SELECT group_uuid, member_dn, instance_id, decided_by->>'dn' AS decided_by FROM ${REVIEW_ITEMS}
      WHERE campaign_id = $1 AND decision = 'revoke' ORDER BY member_dn`,
    [finished!.campaign.campaign_id],
  );
  t.equal(rows.length, 2);
  const headers = await admin();
  for (const item of rows) {
    const answer = await fetch(
      `${annal.url}/api/entries/groups/${item.group_uuid}/changes?include=nodes,patch`,
      {
        headers,
      },
    );
    t.equal(answer.status, 200);
    const changes = ((await answer.json()) as { nodes: Record<string, unknown>[] }).nodes;
    const removal = changes.find(
      (change) => (change.cause as { instanceId?: string } | null)?.instanceId === item.instance_id,
    );
    t.match(
      removal,
      {
        type: "modify",
        cause: { kind: "workflow", workflow: "annal.review-item", step: "revoke" },
      },
      `${item.member_dn}: removed by its item's step`,
    );
    t.equal(removal?.actor, item.decided_by, "made as the owner who decided");
    t.match(removal?.patch, [{ op: "remove", path: /^\/member\// }]);
    // The group held the member until that change, and not after it.
    const at = new Date(removal!.occurredAt as string);
    const holds = async (moment: Date) => {
      const found = await entryAt(pool, item.group_uuid, moment);
      return (
        found.found &&
        (found.entry.attributes.member ?? []).some(
          (dn) => String(dn).toLowerCase() === item.member_dn.toLowerCase(),
        )
      );
    };
    t.equal(await holds(new Date(at.getTime() - 1000)), true, "a member just before");
    t.equal(await holds(at), false, "not after");
  }
});

t.test(
  "in Chromium: the campaigns' list shows both, the finished one's progress says so",
  { skip: withoutChromium },
  async (t) => {
    const [finished, open] = await listedCampaigns(t);
    mkdirSync(SCREENSHOTS, { recursive: true });
    const context = await launchChromium(t, { viewport: { width: 1280, height: 860 } });
    const page = context.pages()[0] ?? (await context.newPage());
    const problems: string[] = [];
    page.on("pageerror", (error) => problems.push(`page: ${error.message}`));
    const shot = async (name: string, fullPage = true) => {
      await page.evaluate("window.scrollTo(0, 0)");
      await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage });
    };
    const ready = () => page.locator("main[data-ready]").waitFor();
    const signIn = async (login: string, returnTo: string) => {
      await context.clearCookies();
      await page.goto(`${annal.url}/auth/login?returnTo=${encodeURIComponent(returnTo)}`);
      await page.fill("#login", login);
      await page.fill("#password", "demo");
      await page.click("#ldap button[type=submit]");
      await page.waitForURL(`${annal.url}${returnTo}`);
      await ready();
    };
    const finishedId = finished!.campaign.campaign_id;
    const openId = open!.campaign.campaign_id;

    await signIn("prossi", "/app/reviews");
    t.equal(await page.locator("#campaigns tbody tr").count(), 2);
    t.match(
      await page.locator(`#campaigns tr[data-campaign="${finishedId}"]`).textContent(),
      /finished/,
    );
    t.notMatch(
      await page.locator(`#campaigns tr[data-campaign="${openId}"]`).textContent(),
      /finished/,
    );
    await shot("20-demo-campaigns");

    await page.locator(`#campaigns tr[data-campaign="${finishedId}"] a`).click();
    await page.waitForURL(`${annal.url}/app/reviews/${finishedId}`);
    await ready();
    const counter = async (name: string) =>
      Number(await page.locator(`[data-counter="${name}"] .value`).textContent());
    t.equal(await counter("open"), 0);
    t.equal(await counter("revoked"), 2);
    t.equal(await counter("undecided"), 1);
    t.equal(await counter("decided"), finished!.progress.decided);
    t.match(await page.locator("main").textContent(), /finished/);
    await page.locator("#by-reviewer .person[data-named='1']").first().waitFor();
    await shot("21-demo-campaign-finished");

    // Olga Wójcik's items of this quarter's: open, each with last quarter's decision.
    await signIn("owojcik", `/app/inbox/reviews?campaign=${openId}`);
    const items = page.locator("#review-items > li");
    await items.first().waitFor();
    t.ok((await items.count()) > 3, "her identity-team's items, open");
    t.match(await page.locator("#review-items").textContent(), /kept/i, "last review: kept");
    await page.locator("#review-items .member .person[data-named='1']").first().waitFor();
    await shot("22-demo-review-items", false);
    t.same(problems, [], "no page errors");
  },
);
