import { writeFileSync } from "node:fs";
import path from "node:path";
import t from "tap";
import { publishedSigningKeys } from "../../src/audit/index.ts";
import { prepareReviewItemDefinition, readItems } from "../../src/reviews/index.ts";
import { databaseClock } from "../../src/workflow/index.ts";
import { configDir, runAnnal } from "../cli/support.ts";
import { captureFixture } from "../support/capture.ts";
import { nextSecond } from "../support/clock.ts";
import { eventually } from "../support/eventually.ts";
import { definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(300_000);

const REPO = path.resolve(import.meta.dirname, "../..");
const PEOPLE = "ou=people,dc=example,dc=org";
const GROUP = "cn=eng,ou=groups,dc=example,dc=org";
const dn = (uid: string) => `uid=${uid},${PEOPLE}`;
const person = (uid: string, manager?: string) =>
  `dn: ${dn(uid)}\nobjectClass: inetOrgPerson\nuid: ${uid}\ncn: ${uid}\nsn: ${uid}\n${manager ? `manager: ${dn(manager)}\n` : ""}`;

const REVIEWS = `
[[reviews]]
name = "eng"
scope = { groups = "(objectClass=groupOfNames)", base = "ou=groups,dc=example,dc=org" }
reviewers = { by = "manager", fallback = "cn=security,ou=groups,dc=example,dc=org" }
deadline = "10d"
`;

/**
 * The review commands against a database with a history: `annal simulate review` shows the
 * items a campaign would have had at a past moment (a membership added since is not one),
 * `annal review start` starts one, `annal review list` shows it, and `annal review report`
 * writes the signed report that `annal verify-export` checks.
 */
t.test("simulate review, review start, list and report from the command line", async (t) => {
  const c = await captureFixture(t, {
    seedLdif: [
      person("mona"),
      person("carl", "mona"),
      person("dina"),
      `dn: ${GROUP}\nobjectClass: groupOfNames\ncn: eng\nmember: ${dn("carl")}\nmember: ${dn("dina")}\n`,
    ].join("\n"),
  });
  await c.sync();
  const before = await nextSecond();
  await nextSecond(before);
  await c.directory.modify(GROUP, [
    { operation: "add", attribute: "member", values: [dn("mona")] },
  ]);
  await c.sync();
  const { file } = await configDir(t, REVIEWS);
  const annal = (args: string[]) =>
    runAnnal([...args, "--config", file], { cwd: REPO, env: { DATABASE_URL: c.db.url } });

  const then = await annal(["simulate", "review", "eng", "--at", before.toISOString(), "--json"]);
  t.equal(then.code, 0, then.stderr);
  const past = JSON.parse(then.stdout) as {
    items: { memberDn: string; reviewers: string[]; began: { kind: string } }[];
    byReviewer: Record<string, number>;
  };
  t.same(
    past.items.map((item) => item.memberDn),
    [dn("carl"), dn("dina")],
    "the membership added since is not an item then",
  );
  t.same(past.items[0]!.reviewers, [dn("mona")], "carl's manager reviews carl");
  t.same(
    past.items[1]!.reviewers,
    ["cn=security,ou=groups,dc=example,dc=org"],
    "the fallback reviews dina, who has no manager",
  );
  const now = await annal(["simulate", "review", "eng", "--at", "now"]);
  t.equal(now.code, 0, now.stderr);
  t.match(now.stdout, /review eng at \S+: 3 items/);
  t.match(now.stdout, new RegExp(`${dn("mona")} in ${GROUP} since \\S+ \\(directory`));

  const unknown = await annal(["review", "start", "nope"]);
  t.equal(unknown.code, 1);
  t.match(
    unknown.stderr,
    /annal: ANNAL_REVIEW_NOT_CONFIGURED: no \[\[reviews\]\] table is named nope/,
  );
  t.match(unknown.stderr, /annal: hint: the reviews configured: eng/);

  // The engine of a running annal advances the items the command starts.
  const f = await workflowFixture(t, {
    dir: definitionsDir(t, {}),
    db: c.db,
    builtIn: [await prepareReviewItemDefinition()],
  });
  const started = await annal(["review", "start", "eng", "--json"]);
  t.equal(started.code, 0, started.stderr);
  const { campaignId, items } = JSON.parse(started.stdout) as { campaignId: string; items: number };
  t.equal(items, 3);
  await eventually(
    async () => {
      await c.sync();
      const open = await readItems(f.pool, campaignId, await databaseClock(f.pool));
      return open.length === 3 && open.every((item) => item.assignees.length > 0)
        ? open
        : undefined;
    },
    { what: "the campaign's items open", timeout: 60_000 },
  );
  const list = await annal(["review", "list"]);
  t.equal(list.code, 0, list.stderr);
  t.match(list.stdout, new RegExp(`${campaignId}\\s+eng\\s+\\S+\\s+\\S+\\s+3\\s+3\\s+0\\s+0\\s+0`));

  const dir = t.testdir({});
  const report = path.join(dir, "report.json");
  const written = await annal(["review", "report", campaignId, "--out", report]);
  t.equal(written.code, 0, written.stderr);
  const keys = path.join(dir, "keys.json");
  writeFileSync(keys, JSON.stringify({ keys: await publishedSigningKeys(c.db.pool) }));
  const verified = await runAnnal(["verify-export", report, `${report}.sig`, "--keys", keys], {
    cwd: REPO,
  });
  t.equal(verified.code, 0, verified.stderr);
});
