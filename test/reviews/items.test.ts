import t from "tap";
import { ACCESS_CONFIGURATION_STREAM, annalEvent } from "../../src/events/index.ts";
import {
  decideItems,
  prepareReviewItemDefinition,
  readItems,
  reviewItemsAt,
  startCampaign,
  type ReviewDefinition,
} from "../../src/reviews/index.ts";
import {
  completeDialog,
  databaseClock,
  dialogIdOf,
  startWorkflow,
  type Actor,
} from "../../src/workflow/index.ts";
import { captureFixture } from "../support/capture.ts";
import { eventually } from "../support/eventually.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(240_000);

const PEOPLE = "ou=people,dc=example,dc=org";
const GROUPS = "ou=groups,dc=example,dc=org";
const ENG = `cn=eng,${GROUPS}`;
const OPS = `cn=ops,${GROUPS}`;
const SECURITY = `cn=security,${GROUPS}`;
const dn = (uid: string) => `uid=${uid},${PEOPLE}`;
const person = (uid: string, manager?: string) =>
  `dn: ${dn(uid)}\nobjectClass: inetOrgPerson\nuid: ${uid}\ncn: ${uid}\nsn: ${uid}\n${manager ? `manager: ${dn(manager)}\n` : ""}`;

/** A workflow that adds a member once its approver agrees: a membership with a workflow cause. */
const JOIN = `
import { bind, defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "join",
  version: 1,
  parameters: z.object({ group: z.string(), member: z.string(), approver: z.string() }),
  bindings: { directory: bind.directory() },
  async run(flow, { group, member, approver }) {
    const { by } = await flow.dialog({
      name: "approve",
      assignees: [approver],
      schema: z.object({ approved: z.boolean() }),
    });
    await flow.step("add member", ({ bindings }) =>
      bindings.directory.modify(group, [{ operation: "add", attribute: "member", values: [member] }]),
      { as: by },
    );
  },
});
`;

const DEFINITION: ReviewDefinition = {
  name: "eng-and-operators",
  scope: { groups: "(cn=eng)", base: GROUPS, accessFunction: "operator" },
  reviewers: { by: "manager", managerAttribute: "manager", fallback: SECURITY },
  schedule: "manual",
  deadline: "10d",
  escalation: [],
  undecided: "keep",
  reasonRequiredForKeep: false,
};

/**
 * Items carry their membership's history: when it began, the change's cause (an import, a
 * directory write and by whom, a workflow and its approver), the reviewer by manager or the
 * fallback, grants of an access function, and the last review's decision.
 */
t.test(
  "items carry their membership's history, reviewers and the last review's decision",
  async (t) => {
    const c = await captureFixture(t, {
      seedLdif: [
        person("mona"),
        person("olga"),
        person("carl", "mona"),
        person("dina"),
        person("emil", "mona"),
        `dn: ${ENG}\nobjectClass: groupOfNames\ncn: eng\nmember: ${dn("carl")}\n`,
        `dn: ${OPS}\nobjectClass: groupOfNames\ncn: ops\nmember: ${dn("dina")}\n`,
      ].join("\n"),
    });
    await c.sync();
    const f = await workflowFixture(t, {
      dir: definitionsDir(t, { "join.ts": JOIN }),
      db: c.db,
      builtIn: [await prepareReviewItemDefinition()],
      bindings: {
        directory: { client: c.directory, base: c.slapd.base, boundAs: c.slapd.bindDN },
      },
    });
    // The operator access function is granted to the ops group.
    await f.store.appendToStream(
      ACCESS_CONFIGURATION_STREAM,
      [
        annalEvent("AccessConfigurationActivated", {
          version: 1,
          digest: "0".repeat(64),
          activatedBy: "the test",
          grants: { operator: [OPS] },
        }),
      ],
      { expectedVersion: "any" },
    );
    // Emil joins eng through a workflow Olga approves; then Dina by a write in the directory.
    const olga: Actor = { ...actor("olga"), dn: dn("olga") };
    const { instanceId } = await startWorkflow(f, {
      name: "join",
      parameters: { group: ENG, member: dn("emil"), approver: olga.accountId },
      as: actor("hr"),
    });
    await f.settled(instanceId, "WAITING");
    await completeDialog(f, {
      dialogId: dialogIdOf(instanceId, 1),
      answer: { approved: true },
      as: olga,
    });
    await f.settled(instanceId, "COMPLETED");
    await c.sync();
    // Made after the workflow's write is captured: capture matches a pending write intent to a
    // change of the entry by annal's own bind (this test writes as it) that it has not captured
    // yet, and would name the workflow as the cause of Dina's change within one pass (a capture
    // issue of its own, noted in issue 55's report).
    await eventually(
      async () => {
        await c.sync();
        const seen = await f.pool.query(
          "SELECT 1 FROM projection_changes.changes WHERE causation_id IS NOT NULL AND dn ILIKE 'cn=eng,%'",
        );
        return seen.rowCount === 1 ? true : undefined;
      },
      { what: "Emil's membership captured with its cause" },
    );
    await c.directory.modify(ENG, [
      { operation: "add", attribute: "member", values: [dn("dina")] },
    ]);
    await c.sync();

    const { items, unreviewable } = await reviewItemsAt(
      f.pool,
      DEFINITION,
      await databaseClock(f.pool),
    );
    t.same(unreviewable, []);
    const item = (group: string, member: string) =>
      items.find((i) => i.groupDn === group && i.memberDn === dn(member));
    t.match(item(ENG, "carl"), {
      kind: "membership",
      reviewers: [dn("mona")],
      began: { kind: "import", position: Number },
      lastReview: null,
    });
    t.match(item(ENG, "dina"), {
      reviewers: [SECURITY],
      began: { kind: "directory", by: new RegExp(c.slapd.bindDN, "i"), position: Number },
    });
    t.match(item(ENG, "emil"), {
      reviewers: [dn("mona")],
      began: { kind: "workflow", workflow: "join", instanceId, by: "olga" },
    });
    t.match(item(OPS, "dina"), {
      kind: "grant",
      accessFunction: "operator",
      reviewers: [SECURITY],
    });
    t.equal(items.length, 4);
    t.ok(
      Date.parse(item(ENG, "dina")!.since) > Date.parse(item(ENG, "carl")!.since),
      "dina's membership began after the import",
    );

    // A campaign decides carl's: the next campaign's item shows that decision.
    const admin: Actor = { ...actor("admin"), access: ["operator"] };
    const first = await startCampaign(f, DEFINITION, { as: admin });
    const mona: Actor = { ...actor("mona"), dn: dn("mona") };
    const carl = items.find((i) => i.memberDn === dn("carl"))!;
    await eventually(
      async () => {
        await c.sync();
        const open = await readItems(f.pool, first.campaignId, await databaseClock(f.pool));
        return open.length === 4 && open.every((i) => i.assignees.length > 0) ? true : undefined;
      },
      { what: "the campaign's items open" },
    );
    const outcome = await decideItems(
      f,
      first.campaignId,
      [{ itemId: carl.itemId, decision: "keep" }],
      mona,
    );
    t.same(
      outcome.map((o) => o.error),
      [null],
    );
    await eventually(
      async () => {
        await c.sync();
        const now = await readItems(f.pool, first.campaignId, await databaseClock(f.pool), {
          state: "decided",
        });
        return now.length === 1 ? true : undefined;
      },
      { what: "the decision projected" },
    );
    const later = await reviewItemsAt(f.pool, DEFINITION, await databaseClock(f.pool));
    t.match(
      later.items.find((i) => i.memberDn === dn("carl")),
      { lastReview: { campaignId: first.campaignId, decision: "keep", by: "mona" } },
    );
  },
);
