import path from "node:path";
import t from "tap";
import { annalEvent, reviewCampaignStream, REVIEW_ITEM_WORKFLOW } from "../../src/events/index.ts";
import {
  decideItems,
  isReviewItemRef,
  prepareReviewItemDefinition,
  readItems,
  reviewItemData,
  reviewItemsAt,
  startCampaign,
  type ReviewDefinition,
} from "../../src/reviews/index.ts";
import {
  bundleDefinition,
  databaseClock,
  definitionOf,
  loadBundle,
  startWorkflows,
  type EngineDeps,
  type PreparedDefinition,
} from "../../src/workflow/index.ts";
import { captureFixture } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(180_000);

const PEOPLE = "ou=people,dc=example,dc=org";
const GROUPS = "ou=groups,dc=example,dc=org";
const ENG = `cn=eng,${GROUPS}`;
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
  escalation: [],
  undecided: "keep",
  reasonRequiredForKeep: false,
};

/** Version 1 of `annal.review-item`, as annal deployed it before version 2 (a copy of its file). */
async function versionOne(): Promise<PreparedDefinition> {
  const bundle = await bundleDefinition(
    path.join(import.meta.dirname, "fixtures", "review-item-v1.ts"),
  );
  const definition = definitionOf(await loadBundle(bundle.code), REVIEW_ITEM_WORKFLOW);
  t.equal(definition.version, 1);
  return { file: `annal:${REVIEW_ITEM_WORKFLOW}`, bundle, definition };
}

/**
 * A campaign as annal started it with version 1 of its items' workflow (the start of 358f11e):
 * the item itself in each instance's parameters, shown by its dialog as its data.
 */
async function startAsVersionOne(deps: EngineDeps, campaignId: string) {
  const now = await databaseClock(deps.pool);
  const { items } = await reviewItemsAt(deps.pool, DEFINITION, now);
  const until = new Date(now.getTime() + 10 * 86_400_000).toISOString();
  await deps.store.appendToStream(
    reviewCampaignStream(campaignId),
    [
      annalEvent("ReviewCampaignStarted", {
        campaignId,
        review: DEFINITION.name,
        title: DEFINITION.name,
        definition: DEFINITION,
        startedAt: now.toISOString(),
        deadline: until,
        startedBy: { accountId: actor("admin").accountId, name: "admin", dn: null },
        itemCount: items.length,
        unreviewable: [],
      }),
      annalEvent("ReviewItemsListed", { campaignId, items }) as never,
    ],
    { expectedVersion: "no_stream" },
  );
  await startWorkflows(
    deps,
    items.map((item) => ({
      name: REVIEW_ITEM_WORKFLOW,
      version: 1,
      parameters: {
        campaignId,
        itemId: item.itemId,
        groupDn: item.groupDn,
        memberDn: item.memberDn,
        attribute: item.attribute,
        reviewers: item.reviewers,
        until,
        escalation: [],
        calendar: null,
        undecided: "keep",
        reasonRequiredForKeep: false,
        item: { ...item, campaignId, review: DEFINITION.name },
      },
      as: actor("admin"),
      trusted: true,
      startKey: `review:${campaignId}:${item.itemId}`,
    })),
    { untilFirstWait: true },
  );
  return items;
}

/**
 * Version 2 of `annal.review-item` records each item once: its dialog refers to it, and
 * `reviewItemData` shows the item there as version 1 recorded it in the dialog. A campaign
 * started under version 1 goes on after annal deploys version 2: its instances replay their
 * own code (the item in their dialogs), are decided, and revoke, as before.
 */
t.test("version 2 refers to its items; version 1's instances go on after it", async (t) => {
  const c = await captureFixture(t, {
    seedLdif: [
      person("ann"),
      person("bob"),
      person("sec"),
      `dn: ${ENG}\nobjectClass: groupOfNames\ncn: eng\nmember: ${dn("ann")}\nmember: ${dn("bob")}\n`,
      `dn: ${SECURITY}\nobjectClass: groupOfNames\ncn: security\nmember: ${dn("sec")}\n`,
    ].join("\n"),
  });
  await c.sync();
  const bindings = {
    directory: { client: c.directory, base: c.slapd.base, boundAs: c.slapd.bindDN },
  };
  // annal before version 2: a campaign started, its items' dialogs open.
  const before = await workflowFixture(t, {
    dir: definitionsDir(t, {}),
    db: c.db,
    builtIn: [await versionOne()],
    bindings,
    startEngine: false,
  });
  const oldCampaign = "00000000-0000-4000-8000-000000000001";
  const oldItems = await startAsVersionOne(before, oldCampaign);
  t.equal(oldItems.length, 2);

  // annal after: version 2 deployed beside the stored version 1.
  const f = await workflowFixture(t, {
    dir: definitionsDir(t, {}),
    db: c.db,
    builtIn: [await prepareReviewItemDefinition()],
    bindings,
  });
  t.equal(f.definitions.current(REVIEW_ITEM_WORKFLOW)?.version, 2);
  const started = await startCampaign(f, { ...DEFINITION, name: "eng-2" }, { as: actor("admin") });

  const listed = async (campaignId: string) =>
    eventually(
      async () => {
        const items = await readItems(f.pool, campaignId, await databaseClock(f.pool));
        return items.length === 2 && items.every((item) => item.dialog_id !== null)
          ? items
          : undefined;
      },
      { what: `campaign ${campaignId}'s items with their dialogs` },
    );
  const oldRows = await listed(oldCampaign);
  const newRows = await listed(started.campaignId);

  const dialogData = async (instanceId: string) => {
    const state = await f.state(instanceId);
    const dialog = [...state.calls.values()].find((call) => call.kind === "dialog");
    return {
      version: state.definition.version,
      data: dialog?.kind === "dialog" ? dialog.data : undefined,
    };
  };
  for (const row of oldRows) {
    const { version, data } = await dialogData(row.instance_id!);
    t.equal(version, 1, "an old item's instance is of version 1");
    t.notOk(isReviewItemRef(data), "its dialog holds the item itself");
    t.same(data, {
      ...oldItems.find((item) => item.itemId === row.item_id),
      campaignId: oldCampaign,
      review: "eng",
    });
  }
  const newItems = (
    await f.pool.query<{ items: (typeof oldItems)[number][] }>(
      `SELECT data -> 'items' AS items FROM events WHERE type = 'ReviewItemsListed'
        AND data ->> 'campaignId' = $1`,
      [started.campaignId],
    )
  ).rows.flatMap((row) => row.items);
  for (const row of newRows) {
    const { version, data } = await dialogData(row.instance_id!);
    t.equal(version, 2, "a new item's instance is of version 2");
    t.same(
      data,
      { campaignId: started.campaignId, itemId: row.item_id },
      "its dialog refers to it",
    );
    t.notOk(
      "item" in ((await f.state(row.instance_id!)).parameters as object),
      "nor do its parameters hold it",
    );
    t.same(
      await reviewItemData(f.pool, [data as { campaignId: string; itemId: string }]),
      [
        {
          ...newItems.find((item) => item.itemId === row.item_id),
          campaignId: started.campaignId,
          review: "eng-2",
        },
      ],
      "its data shown as version 1 recorded it",
    );
  }
  t.same(
    await reviewItemData(f.pool, [{ campaignId: started.campaignId, itemId: "no-such-item" }]),
    [null],
  );

  // Both campaigns decided: the old items by their own code, bob's membership revoked by it.
  const reviewer = { ...actor("sec", { principals: [SECURITY] }), dn: dn("sec") };
  const bobOf = (rows: typeof oldRows) => rows.find((row) => row.member_dn === dn("bob"))!;
  const annOf = (rows: typeof oldRows) => rows.find((row) => row.member_dn === dn("ann"))!;
  const outcomes = [
    ...(await decideItems(
      f,
      started.campaignId,
      newRows.map((row) => ({ itemId: row.item_id, decision: "keep" as const })),
      reviewer,
    )),
    ...(await decideItems(
      f,
      oldCampaign,
      [
        { itemId: annOf(oldRows).item_id, decision: "keep" },
        { itemId: bobOf(oldRows).item_id, decision: "revoke", reason: "left eng" },
      ],
      reviewer,
    )),
  ];
  t.same(
    outcomes.map((outcome) => outcome.error),
    [null, null, null, null],
  );
  for (const row of newRows) {
    t.match((await f.settled(row.instance_id!, "COMPLETED")).result, { decision: "keep" });
  }
  t.match((await f.settled(annOf(oldRows).instance_id!, "COMPLETED")).result, {
    decision: "keep",
    undecided: false,
  });
  t.match((await f.settled(bobOf(oldRows).instance_id!, "COMPLETED")).result, {
    decision: "revoke",
    removed: true,
  });
  const eng = await c.directory.get(ENG, { attributes: ["member"] });
  t.same(eng?.attributes.member, [dn("ann")], "the old item's revocation removed bob");
});
