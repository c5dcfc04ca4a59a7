import t from "tap";
import { accessProjection, workflowsProjection } from "../../projections/index.ts";
import { recordPrincipals, upsertPerson } from "../../src/auth/persons.ts";
import { withTransaction } from "../../src/db/index.ts";
import { Projector, waitForProjection } from "../../src/projector/index.ts";
import {
  advanceDatabaseClock,
  completeDialog,
  databaseClock,
  dialogIdOf,
  endDelegation,
  grantDelegation,
  inboxOf,
  startWorkflow,
  type Actor,
} from "../../src/workflow/index.ts";
import { definitionsDir, workflowFixture, type WorkflowFixture } from "../support/workflow.ts";

t.setTimeout(180_000);

/** A dialog for `assignee`; the result says who answered and for whom. */
const APPROVAL = `
import { defineWorkflow } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "approval",
  version: 1,
  parameters: z.object({ assignee: z.string() }),
  async run(flow, { assignee }) {
    const { answer, by, for: onBehalf } = await flow.dialog({
      name: "approve",
      assignees: [assignee],
      schema: z.object({ approved: z.boolean() }),
      until: "10d",
    });
    return { approved: answer.approved, by: by.name, for: onBehalf?.name ?? null };
  },
});
`;

const APPROVERS = "cn=approvers,ou=groups,dc=example,dc=org";
const quiet = { info() {}, warn() {}, error() {} };

/** A signed-in person: their account (and principals) recorded as a sign-in records them. */
async function person(f: WorkflowFixture, name: string, groups: string[] = []): Promise<Actor> {
  const dn = `uid=${name},ou=people,dc=example,dc=org`;
  const account = await withTransaction(f.pool, async (tx) => {
    const made = await upsertPerson(tx, f.store, {
      origin: "directory",
      subject: dn,
      name,
      displayName: null,
      dn,
    });
    await recordPrincipals(
      tx,
      f.store,
      made.id,
      { principals: groups, count: groups.length },
      1000,
      "sign-in",
    );
    return made;
  });
  return { accountId: account.id, name, dn, principals: groups, access: [] };
}

async function setup(
  t: Parameters<typeof definitionsDir>[0] & { teardown(fn: () => unknown): void },
) {
  const f = await workflowFixture(t, { dir: definitionsDir(t, { "approval.ts": APPROVAL }) });
  const projector = await Projector.start({
    pool: f.pool,
    projections: [workflowsProjection, accessProjection],
    log: quiet,
    pollInterval: 50,
  });
  t.teardown(() => projector.stop());
  const olga = await person(f, "olga", [APPROVERS]);
  const dora = await person(f, "dora");
  const rita = await person(f, "rita");
  const projected = async () => {
    const head = await f.store.head();
    await waitForProjection(f.pool, "workflows", head, 10_000);
    await waitForProjection(f.pool, "access", head, 10_000);
  };
  const start = async (assignee: string, as: Actor = rita) => {
    const { instanceId } = await startWorkflow(f, {
      name: "approval",
      parameters: { assignee },
      as,
    });
    await f.settled(instanceId, "WAITING");
    return instanceId;
  };
  const days = async (n: number) =>
    new Date((await databaseClock(f.pool)).getTime() + n * 86_400_000);
  return { f, olga, dora, rita, projected, start, days };
}

t.test(
  "a delegate answers the delegator's dialog in the period; the answer records by and for",
  async (t) => {
    const { f, olga, dora, projected, start, days } = await setup(t);
    const id = await start(olga.accountId);
    const dialogId = dialogIdOf(id, 1);
    await t.rejects(
      completeDialog(f, { dialogId, answer: { approved: true }, as: dora }),
      { code: "WF_NOT_FOUND" },
      "without a delegation, dora may not even see it",
    );
    const delegation = await grantDelegation(f, { as: olga, to: "dora", until: await days(7) });
    t.match(delegation, { delegator: { name: "olga" }, delegate: { name: "dora" }, ended: null });
    await projected();
    const inbox = await inboxOf(f.pool, dora, 100, undefined, await databaseClock(f.pool));
    t.same(
      inbox.map((row) => [row.dialog_id, row.delegatedBy?.name]),
      [[dialogId, "olga"]],
      "the delegate's inbox lists it, marked as delegated by olga",
    );
    await completeDialog(f, { dialogId, answer: { approved: true }, as: dora });
    const done = await f.settled(id, "COMPLETED");
    t.same(done.result, { approved: true, by: "dora", for: "olga" });
    const recorded = (await f.store.readStream(`workflow-${id}`)).find(
      (e) => e.type === "DialogCompleted",
    );
    t.match(recorded?.data, {
      by: { accountId: dora.accountId },
      for: { accountId: olga.accountId },
    });
  },
);

t.test("a dialog assigned to a principal the delegator holds is the delegate's too", async (t) => {
  const { f, olga, dora, projected, start, days } = await setup(t);
  const id = await start("CN=Approvers,OU=Groups,DC=example,DC=org");
  await grantDelegation(f, { as: olga, to: dora.accountId, until: await days(2) });
  await projected();
  await completeDialog(f, { dialogId: dialogIdOf(id, 1), answer: { approved: false }, as: dora });
  t.same((await f.settled(id, "COMPLETED")).result, { approved: false, by: "dora", for: "olga" });
});

t.test("a delegate never answers a request they started", async (t) => {
  const { f, olga, dora, projected, start, days } = await setup(t);
  const id = await start(olga.accountId, dora);
  await grantDelegation(f, { as: olga, to: "dora", until: await days(2) });
  await projected();
  t.same(
    await inboxOf(f.pool, dora, 100, undefined, await databaseClock(f.pool)),
    [],
    "not in the delegate's inbox",
  );
  await t.rejects(
    completeDialog(f, { dialogId: dialogIdOf(id, 1), answer: { approved: true }, as: dora }),
    { code: "WF_FORBIDDEN", message: /started this instance/ },
  );
});

t.test("outside the period, or once ended, the delegate answers nothing", async (t) => {
  const { f, olga, dora, projected, start, days } = await setup(t);
  const id = await start(olga.accountId);
  const dialogId = dialogIdOf(id, 1);
  const answer = () => completeDialog(f, { dialogId, answer: { approved: true }, as: dora });
  const later = await grantDelegation(f, {
    as: olga,
    to: "dora",
    from: await days(1),
    until: await days(2),
  });
  await projected();
  await t.rejects(answer(), { code: "WF_NOT_FOUND" }, "before its period");
  await advanceDatabaseClock(f.pool, 25 * 3_600_000);
  const ended = await endDelegation(f, { as: olga, id: later.id });
  t.ok(ended.ended, "ended early");
  await t.rejects(answer(), { code: "WF_NOT_FOUND" }, "after its early end");
  await t.rejects(
    endDelegation(f, { as: olga, id: later.id }),
    { code: "WF_CONFLICT" },
    "ending it twice",
  );
  const short = await grantDelegation(f, { as: olga, to: "dora", until: await days(1) });
  await advanceDatabaseClock(f.pool, 25 * 3_600_000);
  await t.rejects(answer(), { code: "WF_NOT_FOUND" }, "past its until");
  await t.rejects(endDelegation(f, { as: olga, id: short.id }), { code: "WF_CONFLICT" });
});

t.test("refusals: oneself, no such person, an empty or past period, another's end", async (t) => {
  const { f, olga, dora, rita, days } = await setup(t);
  await t.rejects(grantDelegation(f, { as: olga, to: "olga", until: await days(1) }), {
    code: "WF_VALIDATION",
    message: /themselves/,
  });
  await t.rejects(grantDelegation(f, { as: olga, to: "nobody", until: await days(1) }), {
    code: "WF_NOT_FOUND",
  });
  await t.rejects(
    grantDelegation(f, { as: olga, to: "dora", from: await days(2), until: await days(1) }),
    { code: "WF_VALIDATION", message: /ends after it starts/ },
  );
  await t.rejects(
    grantDelegation(f, { as: olga, to: "dora", from: await days(-2), until: await days(-1) }),
    {
      code: "WF_VALIDATION",
      message: /has passed/,
    },
  );
  const given = await grantDelegation(f, { as: olga, to: "dora", until: await days(1) });
  await t.rejects(endDelegation(f, { as: dora, id: given.id }), { code: "WF_FORBIDDEN" });
  await t.rejects(endDelegation(f, { as: rita, id: given.id }), { code: "WF_NOT_FOUND" });
});
