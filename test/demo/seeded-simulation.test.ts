import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import pino from "pino";
import t from "tap";
import { startAnnal } from "../../src/app/index.ts";
import { loadConfig } from "../../src/config/index.ts";
import { freePort } from "../../src/ports.ts";
import { waitForProjection } from "../../src/projector/index.ts";
import { logOrder } from "../../src/store/index.ts";
import { loadInstance } from "../../src/workflow/index.ts";
import { allProjections } from "../../projections/index.ts";
import { WORKFLOW_INSTANCES } from "../../projections/workflows/tables.ts";
import { runAnnal } from "../cli/support.ts";
import { eventually } from "../support/eventually.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * The demo as `npm start` runs it (ops/demo/annal.toml: its own slapd with the demo
 * organisation and its seeded past, its workflows and calendar), on the test's database and
 * free ports: the first start seeds past access requests run by the deployed engine, and the
 * README's simulation command, run exactly as written, reports them beside what a changed
 * approval rule would have done.
 */

t.setTimeout(400_000);

const REPO = path.resolve(import.meta.dirname, "../..");
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
      WHERE e.type = 'EntryModified' AND e.metadata->>'source' = 'demo-history'`,
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
