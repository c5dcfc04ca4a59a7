import t from "tap";
import { annalEvent, reviewCampaignStream } from "../../src/events/index.ts";
import {
  prepareReviewItemDefinition,
  quarterOf,
  readCampaigns,
  readItems,
  reviewItemsAt,
  scheduledCampaignId,
  startReviewSchedule,
  type ReviewDefinition,
} from "../../src/reviews/index.ts";
import { advanceDatabaseClock, databaseClock } from "../../src/workflow/index.ts";
import { captureFixture } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";
import { definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(240_000);

const silent = { info() {}, warn() {}, error() {} };
const GROUPS = "ou=groups,dc=example,dc=org";

const review = (name: string, schedule: "manual" | "quarterly"): ReviewDefinition => ({
  name,
  scope: { groups: "(objectClass=groupOfNames)", base: GROUPS },
  reviewers: { by: "owner", managerAttribute: "manager", fallback: `cn=security,${GROUPS}` },
  schedule,
  deadline: "10d",
  escalation: [],
  undecided: "keep",
  reasonRequiredForKeep: false,
});

t.test("a quarter begins on the first of January, April, July and October (UTC)", async (t) => {
  t.equal(quarterOf(new Date("2026-12-07T06:00:00Z")).toISOString(), "2026-10-01T00:00:00.000Z");
  t.equal(quarterOf(new Date("2027-01-01T00:00:00Z")).toISOString(), "2027-01-01T00:00:00.000Z");
  t.equal(quarterOf(new Date("2027-06-30T23:59:59Z")).toISOString(), "2027-04-01T00:00:00.000Z");
});

t.test(
  "a quarterly review starts its campaign of each quarter once, whatever the number of processes; a manual one never",
  async (t) => {
    const c = await captureFixture(t, {
      seedLdif: `dn: uid=ann,ou=people,dc=example,dc=org\nobjectClass: inetOrgPerson\nuid: ann\ncn: ann\nsn: ann\n\ndn: cn=eng,${GROUPS}\nobjectClass: groupOfNames\ncn: eng\nowner: uid=ann,ou=people,dc=example,dc=org\nmember: uid=ann,ou=people,dc=example,dc=org\n`,
    });
    await c.sync();
    const f = await workflowFixture(t, {
      dir: definitionsDir(t, {}),
      db: c.db,
      builtIn: [await prepareReviewItemDefinition()],
    });
    const reviews = [review("quarterly", "quarterly"), review("by-hand", "manual")];
    // Two processes' workers look at once.
    const one = startReviewSchedule(f, reviews, silent, 100);
    const two = startReviewSchedule(f, reviews, silent, 100);
    t.teardown(() => Promise.all([one.stop(), two.stop()]));

    const now = await databaseClock(f.pool);
    const first = scheduledCampaignId("quarterly", quarterOf(now));
    const campaigns = async () => {
      await c.sync();
      return readCampaigns(f.pool);
    };
    await eventually(async () => ((await campaigns()).length === 1 ? true : undefined), {
      what: "the quarter's campaign",
    });
    const [started] = await campaigns();
    t.match(started, { campaign_id: first, review: "quarterly", item_count: 1 });
    t.match(started!.started_by, { accountId: "review-schedule" });

    // Into the next quarter: its campaign starts, once.
    const next = new Date(
      Date.UTC(now.getUTCFullYear(), Math.floor(now.getUTCMonth() / 3) * 3 + 3, 1, 0, 1),
    );
    await advanceDatabaseClock(f.pool, next.getTime() - now.getTime());
    await eventually(async () => ((await campaigns()).length === 2 ? true : undefined), {
      what: "the next quarter's campaign",
      timeout: 30_000,
    });
    const all = await campaigns();
    t.same(
      all.map((campaign) => campaign.campaign_id).sort(),
      [first, scheduledCampaignId("quarterly", quarterOf(next))].sort(),
    );
    t.ok(
      all.every((campaign) => campaign.review === "quarterly"),
      "the manual review never starts",
    );
  },
);

t.test("a campaign whose start was cut short has its items started by the schedule", async (t) => {
  const c = await captureFixture(t, {
    seedLdif: `dn: uid=ann,ou=people,dc=example,dc=org\nobjectClass: inetOrgPerson\nuid: ann\ncn: ann\nsn: ann\n\ndn: cn=eng,${GROUPS}\nobjectClass: groupOfNames\ncn: eng\nowner: uid=ann,ou=people,dc=example,dc=org\nmember: uid=ann,ou=people,dc=example,dc=org\n`,
  });
  await c.sync();
  const f = await workflowFixture(t, {
    dir: definitionsDir(t, {}),
    db: c.db,
    builtIn: [await prepareReviewItemDefinition()],
  });
  // What a start that died after recording the campaign leaves: its events, no instance.
  const definition = review("by-hand", "manual");
  const now = await databaseClock(f.pool);
  const { items } = await reviewItemsAt(f.pool, definition, now);
  const campaignId = "00000000-0000-4000-8000-00000000c07f";
  await f.store.appendToStream(
    reviewCampaignStream(campaignId),
    [
      annalEvent("ReviewCampaignStarted", {
        campaignId,
        review: definition.name,
        title: definition.name,
        definition,
        startedAt: new Date(now.getTime() - 120_000).toISOString(),
        deadline: new Date(now.getTime() + 86_400_000).toISOString(),
        startedBy: { accountId: "admin", name: "admin", dn: null },
        itemCount: items.length,
        unreviewable: [],
      }),
      annalEvent("ReviewItemsListed", { campaignId, items }),
    ],
    { expectedVersion: "no_stream" },
  );
  const schedule = startReviewSchedule(f, [definition], silent, 100);
  t.teardown(() => schedule.stop());
  const resumed = await eventually(
    async () => {
      await c.sync();
      const open = await readItems(f.pool, campaignId, await databaseClock(f.pool));
      return open.length === 1 && open[0]!.instance_id && open[0]!.assignees.length > 0
        ? open
        : undefined;
    },
    { what: "the cut-short campaign's item started", timeout: 30_000 },
  );
  t.match(resumed[0], { state: "open", reviewers: ["uid=ann,ou=people,dc=example,dc=org"] });
});
