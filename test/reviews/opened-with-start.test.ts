import t from "tap";
import { canonicalPrincipal } from "../../projections/workflows/index.ts";
import {
  decideItems,
  prepareReviewItemDefinition,
  readItems,
  startCampaign,
  type ReviewDefinition,
} from "../../src/reviews/index.ts";
import { databaseClock } from "../../src/workflow/index.ts";
import { captureFixture } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(180_000);

const PEOPLE = "ou=people,dc=example,dc=org";
const GROUPS = "ou=groups,dc=example,dc=org";
const SECURITY = `cn=security,${GROUPS}`;
const dn = (uid: string) => `uid=${uid},${PEOPLE}`;
const person = (uid: string) =>
  `dn: ${dn(uid)}\nobjectClass: inetOrgPerson\nuid: ${uid}\ncn: ${uid}\nsn: ${uid}\n`;

const DEFINITION: ReviewDefinition = {
  name: "eng",
  scope: { groups: "(cn=eng)", base: GROUPS },
  reviewers: { by: "group", group: SECURITY, managerAttribute: "manager" },
  schedule: "manual",
  deadline: "10d",
  escalation: [{ after: "3d", to: ["fallback"], mode: "add" }],
  undecided: "keep",
  reasonRequiredForKeep: false,
};

/**
 * A campaign's items are decidable once its start returns, without the engine: each item's
 * instance is started with its dialog open (`startWorkflows` until the first wait), in the
 * start's transaction, with its deadline's and escalation's timers and no wake-up, and the
 * reviews projection lists each item with its instance, its dialog and its assignees (at
 * 100,000 items the engine took ten minutes to open them one advance each). The engine replays
 * the recorded dialog when a decision wakes the instance.
 */
t.test("a campaign's items are started with their dialogs open, decidable at once", async (t) => {
  const c = await captureFixture(t, {
    seedLdif: [
      person("ann"),
      person("bob"),
      person("sec"),
      `dn: cn=eng,${GROUPS}\nobjectClass: groupOfNames\ncn: eng\nmember: ${dn("ann")}\nmember: ${dn("bob")}\n`,
      `dn: ${SECURITY}\nobjectClass: groupOfNames\ncn: security\nmember: ${dn("sec")}\n`,
    ].join("\n"),
  });
  await c.sync();
  const f = await workflowFixture(t, {
    dir: definitionsDir(t, {}),
    db: c.db,
    builtIn: [await prepareReviewItemDefinition()],
  });
  const started = await startCampaign(
    f,
    { ...DEFINITION, reviewers: { ...DEFINITION.reviewers, fallback: SECURITY } },
    { as: actor("admin") },
  );
  t.equal(started.items, 2);

  const events = await f.pool.query<{ stream_id: string; type: string; transaction_id: string }>(
    `SELECT stream_id, type, transaction_id::text FROM events
      WHERE stream_id LIKE 'workflow-%' AND stream_id NOT LIKE 'workflow-definition-%'
      ORDER BY stream_id, stream_version`,
  );
  const streams = Map.groupBy(events.rows, (row) => row.stream_id);
  t.equal(streams.size, 2, "an instance an item");
  for (const rows of streams.values()) {
    t.same(
      rows.map((row) => row.type),
      ["WorkflowStarted", "DialogOpened"],
      "its dialog opened with its start",
    );
    t.equal(rows[1]!.transaction_id, rows[0]!.transaction_id, "in the start's transaction");
  }
  const timers = await f.pool.query<{ reason: string }>(
    "SELECT reason FROM workflow_timers ORDER BY reason",
  );
  t.same(
    timers.rows.map((row) => row.reason),
    ["dialog 1", "dialog 1", "dialog 1 escalation 0", "dialog 1 escalation 0"],
    "each with its deadline's and its escalation's timer",
  );
  const wakes = await f.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'annal-workflow-wake'",
  );
  t.equal(wakes.rows[0]!.n, 0, "no wake-up queued for the engine");

  const listed = await eventually(
    async () => {
      const items = await readItems(f.pool, started.campaignId, await databaseClock(f.pool), {
        state: "open",
        assignedTo: [canonicalPrincipal(SECURITY)],
      });
      return items.length === 2 && items.every((item) => item.dialog_id !== null)
        ? items
        : undefined;
    },
    { what: "both items listed with their dialogs, for the reviewing group" },
  );
  for (const item of listed) {
    t.ok(item.instance_id, "with its instance");
    t.same(item.assignees, [canonicalPrincipal(SECURITY)]);
  }

  const reviewer = { ...actor("sec", { principals: [SECURITY] }), dn: dn("sec") };
  const outcomes = await decideItems(
    f,
    started.campaignId,
    listed.map((item) => ({ itemId: item.item_id, decision: "keep" as const })),
    reviewer,
  );
  t.same(
    outcomes.map((outcome) => outcome.error),
    [null, null],
    "both decided as soon as the start returned",
  );
  for (const item of listed) {
    t.match((await f.settled(item.instance_id!, "COMPLETED")).result, {
      decision: "keep",
      undecided: false,
    });
  }
});
