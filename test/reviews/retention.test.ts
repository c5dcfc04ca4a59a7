import t from "tap";
import { reviewsProjection } from "../../projections/index.ts";
import { chainBatch, runRetention } from "../../src/audit/index.ts";
import { replayProjection } from "../../src/projector/index.ts";
import {
  decideItems,
  prepareReviewItemDefinition,
  readItems,
  startCampaign,
  type ReviewDefinition,
} from "../../src/reviews/index.ts";
import { databaseClock, type Actor } from "../../src/workflow/index.ts";
import { captureFixture } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(240_000);

const PEOPLE = "ou=people,dc=example,dc=org";
const GROUP = "cn=eng,ou=groups,dc=example,dc=org";
const dn = (uid: string) => `uid=${uid},${PEOPLE}`;
const person = (uid: string) =>
  `dn: ${dn(uid)}\nobjectClass: inetOrgPerson\nuid: ${uid}\ncn: ${uid}\nsn: ${uid}\n`;

/**
 * Retention folds a finished campaign's item instances into checkpoints; the reviews projection
 * replayed from the retained log still says what was decided, by whom, and what the revocation
 * did.
 */
t.test("a campaign's decisions survive retention's folding of its instances", async (t) => {
  const c = await captureFixture(t, {
    seedLdif: [
      person("ann"),
      person("bea"),
      person("cid"),
      `dn: ${GROUP}\nobjectClass: groupOfNames\ncn: eng\nowner: ${dn("ann")}\nmember: ${dn("bea")}\nmember: ${dn("cid")}\n`,
    ].join("\n"),
  });
  await c.sync();
  const f = await workflowFixture(t, {
    dir: definitionsDir(t, {}),
    db: c.db,
    builtIn: [await prepareReviewItemDefinition()],
    bindings: {
      directory: { client: c.directory, base: c.slapd.base, boundAs: c.slapd.bindDN },
    },
  });
  const definition: ReviewDefinition = {
    name: "eng",
    scope: { groups: "(cn=eng)" },
    reviewers: { by: "owner", managerAttribute: "manager" },
    schedule: "manual",
    deadline: "10d",
    escalation: [],
    undecided: "keep",
    reasonRequiredForKeep: false,
  };
  const { campaignId } = await startCampaign(f, definition, { as: actor("admin") });
  const ann: Actor = { ...actor("ann"), dn: dn("ann") };
  const open = await eventually(
    async () => {
      await c.sync();
      const now = await readItems(f.pool, campaignId, await databaseClock(f.pool));
      return now.length === 2 && now.every((item) => item.assignees.length > 0) ? now : undefined;
    },
    { what: "the items open" },
  );
  const of = (uid: string) => open.find((item) => item.member_dn === dn(uid))!.item_id;
  await decideItems(
    f,
    campaignId,
    [
      { itemId: of("bea"), decision: "keep" },
      { itemId: of("cid"), decision: "revoke", reason: "left" },
    ],
    ann,
  );
  const shown = async () =>
    (await readItems(f.pool, campaignId, await databaseClock(f.pool))).map((item) => ({
      member: item.member_dn,
      state: item.state,
      decision: item.decision,
      reason: item.reason,
      by: item.decided_by?.name,
      revocation: item.revocation,
      instance: item.instance_id,
    }));
  const before = await eventually(
    async () => {
      await c.sync();
      const now = await shown();
      return now.every((item) => item.state === "decided") &&
        now.some((item) => item.revocation === "done")
        ? now
        : undefined;
    },
    { what: "both decided, the revocation done" },
  );
  for (const item of open) await f.settled(item.instance_id!, "COMPLETED");
  while ((await chainBatch(f.pool, 1000)) > 0);

  const horizon = await databaseClock(f.pool);
  await runRetention(f.pool, { horizon, workflowHorizon: horizon });
  const kept = await f.pool.query<{ type: string }>(
    "SELECT type FROM events WHERE stream_id = $1",
    [`workflow-${open[0]!.instance_id}`],
  );
  t.same(
    kept.rows.map((row) => row.type),
    ["WorkflowCheckpointed"],
    "an item's instance is folded into a checkpoint",
  );
  await replayProjection({ pool: f.pool, projection: reviewsProjection });
  t.same(await shown(), before, "the replayed items say what the live ones said");
});
