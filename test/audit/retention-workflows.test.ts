import t from "tap";
import { workflowsProjection } from "../../projections/index.ts";
import { DIALOGS, WORKFLOW_INSTANCES, WORKFLOW_STEPS } from "../../projections/workflows/index.ts";
import { chainBatch, runRetention, verifyChain } from "../../src/audit/index.ts";
import type { Pool } from "../../src/db/index.ts";
import { Projector, replayProjection, waitForProjection } from "../../src/projector/index.ts";
import {
  cancelInstance,
  completeDialog,
  dialogIdOf,
  retryInstance,
  startWorkflow,
} from "../../src/workflow/index.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(300_000);

const REVIEW = `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "review",
  version: 1,
  parameters: z.object({ doc: z.string() }),
  async run(flow, { doc }) {
    const size = await flow.step("measure", () => doc.length);
    const { answer } = await flow.dialog({
      name: "review " + doc,
      assignees: ["olga"],
      schema: z.object({ ok: z.boolean() }),
      data: { size },
    });
    if (!answer.ok) throw new Error("rejected " + doc);
    return { doc, size };
  },
});
`;

const quiet = { info() {}, warn() {}, error() {} };
const olga = actor("olga", { principals: ["olga"] });
const operator = actor("otto", { access: ["operator"] });

async function tables(pool: Pool) {
  const read = async (table: string, order: string) =>
    (await pool.query(`SELECT * FROM ${table} ORDER BY ${order}`)).rows;
  return {
    instances: await read(WORKFLOW_INSTANCES, "instance_id"),
    steps: await read(WORKFLOW_STEPS, "instance_id, seq"),
    dialogs: await read(DIALOGS, "dialog_id"),
  };
}

async function chainAll(pool: Pool): Promise<void> {
  while ((await chainBatch(pool, 1000)) > 0);
}

const streamTypes = async (pool: Pool, instanceId: string) =>
  (
    await pool.query<{ type: string }>(
      "SELECT type FROM events WHERE stream_id = $1 ORDER BY stream_version",
      [`workflow-${instanceId}`],
    )
  ).rows.map((row) => row.type);

t.test("retention folds finished instances and keeps running ones whole", async (t) => {
  const dir = definitionsDir(t, { "review.ts": REVIEW });
  const f = await workflowFixture(t, { dir });
  const projector = await Projector.start({
    pool: f.pool,
    projections: [workflowsProjection],
    log: quiet,
    pollInterval: 50,
  });
  t.teardown(() => projector.stop());
  const start = async (doc: string) => {
    const { instanceId } = await startWorkflow(f, {
      name: "review",
      parameters: { doc },
      as: actor("rita"),
    });
    await f.settled(instanceId, "WAITING");
    return instanceId;
  };
  const [done, failed, cancelled] = [await start("a"), await start("bb"), await start("ccc")];
  await completeDialog(f, { dialogId: dialogIdOf(done, 2), answer: { ok: true }, as: olga });
  await completeDialog(f, { dialogId: dialogIdOf(failed, 2), answer: { ok: false }, as: olga });
  await cancelInstance(f, { instanceId: cancelled, as: operator });
  await f.settled(done, "COMPLETED");
  await f.settled(failed, "ERRORED");
  await f.settled(cancelled, "CANCELLED");
  const horizon = new Date();
  // Started after the horizon, and still waiting at the run: kept whole either way.
  const running = await start("dddd");
  await waitForProjection(f.pool, "workflows", await f.store.head());
  await chainAll(f.pool);
  const live = await tables(f.pool);
  const runningBefore = await streamTypes(f.pool, running);
  await projector.stop();

  const report = await runRetention(f.pool, { horizon, workflowHorizon: horizon });
  t.equal(report.workflowsFolded, 3, "the completed, the errored and the cancelled instance");
  for (const id of [done, failed, cancelled]) {
    t.same(await streamTypes(f.pool, id), ["WorkflowCheckpointed"], "folded into a checkpoint");
  }
  t.same(await streamTypes(f.pool, running), runningBefore, "the running one is whole");
  const definitions = await f.pool.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM events WHERE stream_id LIKE 'workflow-definition-%'",
  );
  t.ok(definitions.rows[0]!.n > 0, "deployments are kept");

  await replayProjection({ pool: f.pool, projection: workflowsProjection });
  t.same(await tables(f.pool), live, "a replay of the retained log gives the tables it had");
  t.equal((await f.state(done)).status, "COMPLETED", "the engine folds from the checkpoint");

  await chainAll(f.pool);
  t.ok((await verifyChain(f.pool)).checked > 0, "the chain verifies from the horizon on");

  // An errored instance can still be retried: the engine replays its run from the checkpoint's
  // calls (the dialog's recorded answer), and it fails again the same way.
  const version = (await f.state(failed)).version;
  await retryInstance(f, { instanceId: failed, as: operator });
  const retried = await f.settled(
    failed,
    (state) => state.status === "ERRORED" && state.version > version + 1,
  );
  t.match(retried.error, { message: /rejected bb/ });
  // The running one goes on from its whole stream.
  await completeDialog(f, { dialogId: dialogIdOf(running, 2), answer: { ok: true }, as: olga });
  t.match((await f.settled(running, "COMPLETED")).result, { doc: "dddd", size: 4 });
  await chainAll(f.pool);
  t.ok((await verifyChain(f.pool)).checked > 0, "and after changes applied since");
});
