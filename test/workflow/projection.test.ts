import t from "tap";
import { workflowsProjection } from "../../projections/index.ts";
import { DIALOGS, WORKFLOW_INSTANCES, WORKFLOW_STEPS } from "../../projections/workflows/index.ts";
import { Projector, replayProjection, waitForProjection } from "../../src/projector/index.ts";
import {
  completeDialog,
  dialogIdOf,
  inboxOf,
  instanceAt,
  startWorkflow,
} from "../../src/workflow/index.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(180_000);

const REVIEW = `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "review",
  version: 1,
  parameters: z.object({ doc: z.string(), reviewer: z.string() }),
  async run(flow, { doc, reviewer }) {
    const size = await flow.step("measure", () => doc.length);
    const { answer } = await flow.dialog({
      name: "review " + doc,
      assignees: [reviewer],
      schema: z.object({ ok: z.boolean() }),
      data: { size },
    });
    if (!answer.ok) throw new Error("rejected " + doc);
    return { doc, size };
  },
});
`;

const quiet = { info() {}, warn() {}, error() {} };
const olga = actor("olga", { principals: ["cn=Reviewers,ou=Groups,dc=example,dc=org"] });

async function rows(pool: import("../../src/db/index.ts").Pool) {
  const read = async (table: string, order: string) =>
    (await pool.query(`SELECT * FROM ${table} ORDER BY ${order}`)).rows;
  return {
    instances: await read(WORKFLOW_INSTANCES, "instance_id"),
    steps: await read(WORKFLOW_STEPS, "instance_id, seq"),
    dialogs: await read(DIALOGS, "dialog_id"),
  };
}

t.test(
  "the workflows projection: inbox, and replaying gives the tables incremental gave",
  async (t) => {
    const dir = definitionsDir(t, { "review.ts": REVIEW });
    const f = await workflowFixture(t, { dir });
    const projector = await Projector.start({
      pool: f.pool,
      projections: [workflowsProjection],
      log: quiet,
      pollInterval: 50,
    });
    t.teardown(() => projector.stop());
    const ids: string[] = [];
    for (const doc of ["a", "bb", "ccc"]) {
      const { instanceId } = await startWorkflow(f, {
        name: "review",
        parameters: { doc, reviewer: "CN=reviewers,OU=groups,DC=example,DC=org" },
        as: actor("rita"),
      });
      ids.push(instanceId);
      await f.settled(instanceId, "WAITING");
    }
    await waitForProjection(f.pool, "workflows", await f.store.head());
    const inbox = await inboxOf(f.pool, olga);
    t.same(
      inbox.map((d) => d.dialog_id).sort(),
      ids.map((id) => dialogIdOf(id, 2)).sort(),
      "the group's member sees the three dialogs",
    );
    t.same(await inboxOf(f.pool, actor("sam")), [], "someone else sees none");

    await completeDialog(f, { dialogId: dialogIdOf(ids[0]!, 2), answer: { ok: true }, as: olga });
    await completeDialog(f, { dialogId: dialogIdOf(ids[1]!, 2), answer: { ok: false }, as: olga });
    await f.settled(ids[0]!, "COMPLETED");
    await f.settled(ids[1]!, "ERRORED");
    await waitForProjection(f.pool, "workflows", await f.store.head());

    const incremental = await rows(f.pool);
    t.same(incremental.instances.map((r) => r.status).sort(), ["COMPLETED", "ERRORED", "WAITING"]);
    t.match(
      incremental.steps.filter((r) => r.instance_id === ids[0]),
      [
        { seq: 1, kind: "step", name: "measure", state: "completed", attempts: 1, result: 1 },
        { seq: 2, kind: "dialog", state: "completed", result: { ok: true } },
      ],
    );
    t.equal((await inboxOf(f.pool, olga)).length, 1, "answered dialogs leave the inbox");

    await projector.stop();
    await replayProjection({ pool: f.pool, projection: workflowsProjection });
    t.same(await rows(f.pool), incremental, "the replayed tables equal the incremental ones");
  },
);

t.test("an instance reads as it was at a past moment", async (t) => {
  const dir = definitionsDir(t, { "review.ts": REVIEW });
  const f = await workflowFixture(t, { dir });
  const { instanceId } = await startWorkflow(f, {
    name: "review",
    parameters: { doc: "x", reviewer: "olga" },
    as: actor("rita"),
  });
  const waiting = await f.settled(instanceId, "WAITING");
  const before = new Date();
  await completeDialog(f, {
    dialogId: dialogIdOf(instanceId, 2),
    answer: { ok: true },
    as: actor("olga", { principals: ["olga"] }),
  });
  await f.settled(instanceId, "COMPLETED");
  const then = await instanceAt(f.pool, instanceId, before);
  t.equal(then?.status, "WAITING");
  t.equal(then?.version, waiting.version);
  t.equal((await instanceAt(f.pool, instanceId, new Date()))?.status, "COMPLETED");
  t.equal(await instanceAt(f.pool, instanceId, new Date(0)), undefined, "not yet started");
});
