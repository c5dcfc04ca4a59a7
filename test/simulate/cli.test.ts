import path from "node:path";
import t from "tap";
import { chainBatch, runRetention } from "../../src/audit/index.ts";
import { EventStore } from "../../src/store/index.ts";
import { configDir, runAnnal } from "../cli/support.ts";
import { EntryHistory } from "../support/entries.ts";
import { testDatabase } from "../support/postgres.ts";

/**
 * `annal simulate` refuses what it cannot simulate with a stable code, before it opens any
 * database: a file that is not there or not a definition, moments that are none, a period that
 * ends before it starts, a policy it does not know.
 */

t.setTimeout(400_000);

const REPO = path.resolve(import.meta.dirname, "../..");
const LEAVER = path.join(REPO, "ops/demo/workflows/leaver.ts");

const refusals: [string, string[], RegExp][] = [
  [
    "no such file",
    ["simulate", "nothere.ts", "--from", "now-1d", "--to", "now"],
    /ANNAL_SIMULATE_FILE_INVALID: nothere\.ts: there is no such file/,
  ],
  [
    "not a definition",
    ["simulate", path.join(REPO, "package.json"), "--from", "now-1d", "--to", "now"],
    /ANNAL_SIMULATE_FILE_INVALID/,
  ],
  [
    "a moment that is none",
    ["simulate", LEAVER, "--from", "the other day", "--to", "now"],
    /ANNAL_SIMULATE_PERIOD_INVALID: --from: "the other day" is not a moment/,
  ],
  [
    "--to before --from",
    ["simulate", LEAVER, "--from", "now", "--to", "now-1d"],
    /ANNAL_SIMULATE_PERIOD_INVALID: --to \S+ lies before --from/,
  ],
  [
    "an unknown policy",
    ["simulate", LEAVER, "--from", "now-1d", "--to", "now", "--dialogs", "maybe"],
    /ANNAL_SIMULATE_POLICY_INVALID: --dialogs maybe/,
  ],
  [
    "access: not TOML",
    ["simulate", "access", LEAVER, "--at", "now"],
    /ANNAL_SIMULATE_FILE_INVALID: \S+leaver\.ts: /,
  ],
];

for (const [what, args, expected] of refusals) {
  t.test(`simulate refuses ${what}`, async (t) => {
    const run = await runAnnal(args, {
      cwd: REPO,
      env: { ANNAL_CONFIG: path.join(REPO, "ops/demo/annal.toml") },
    });
    t.equal(run.code, 1, run.stderr);
    t.match(run.stderr, expected);
    t.equal(run.stdout, "");
  });
}

t.test("simulate refuses a period that begins before the workflow horizon", async (t) => {
  const { url, pool } = await testDatabase(t);
  const store = await EventStore.open(pool);
  const history = new EntryHistory(pool, store);
  const person = (uid: string) => ({
    dn: `uid=${uid},ou=people,dc=example,dc=org`,
    type: "user",
    attributes: { objectClass: ["inetOrgPerson"], uid: [uid], cn: [uid], sn: [uid] },
  });
  const day = (n: number) => new Date(Date.UTC(2026, 10, n, 9));
  await history.add(person("alice"), { at: day(1) });
  await history.add(person("bob"), { at: day(12) });
  while ((await chainBatch(pool, 100)) > 0);
  // Entries kept from day 10, finished instances from day 20: the later one bounds a replay.
  const report = await runRetention(pool, { horizon: day(10), workflowHorizon: day(20) });
  t.equal(report.streamsFolded, 1);
  const { file } = await configDir(t, "");
  const simulate = (from: string) =>
    runAnnal(
      ["simulate", LEAVER, "--from", from, "--to", "2026-11-27T00:00:00Z", "--config", file],
      {
        cwd: REPO,
        env: { DATABASE_URL: url },
      },
    );

  const refused = await simulate("2026-11-15T00:00:00Z");
  t.equal(refused.code, 1, refused.stderr);
  t.equal(
    refused.stderr,
    "annal: ANNAL_BEFORE_RETENTION: --from 2026-11-15T00:00:00.000Z is before the retention horizon 2026-11-20T09:00:00.000Z: the log keeps no history before it\n" +
      "annal: hint: ask for a moment at or after the horizon the answer names\n",
  );
  t.equal(refused.stdout, "");

  const after = await simulate("2026-11-20T09:00:00Z");
  t.equal(after.code, 0, after.stderr);
  t.match(after.stdout, /leaver/);
});
