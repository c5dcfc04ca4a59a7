import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import t from "tap";
import { extractToFolder } from "../../src/extract/index.ts";
import { Projector, waitForProjection } from "../../src/projector/index.ts";
import { allProjections } from "../../projections/index.ts";
import { readHead } from "../../src/store/index.ts";
import { startWorkflow } from "../../src/workflow/index.ts";
import { duckdb, literal } from "../support/duckdb.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

/**
 * Workflow instances and their steps in the extract: a finished instance is written once, for
 * good; one still waiting is written open, and again by each run until it finishes.
 */
t.setTimeout(300_000);

const FLOWS = {
  "chain.ts": `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "chain",
  version: 1,
  parameters: z.object({ steps: z.number().int().min(0) }),
  async run(flow, { steps }) {
    let total = 0;
    for (let i = 0; i < steps; i++) total = await flow.step("add " + i, () => total + i);
    return { total };
  },
});`,
  "hold.ts": `
import { defineWorkflow } from "annal";
import { z } from "zod";
export default defineWorkflow({
  name: "hold",
  version: 1,
  parameters: z.object({}),
  async run(flow) {
    await flow.step("before", () => 1);
    await flow.dialog({ name: "hold", assignees: ["x"], schema: z.object({}) });
    return { held: true };
  },
});`,
};

const f = await workflowFixture(t, { dir: definitionsDir(t, FLOWS) });
const projector = await Projector.start({
  pool: f.pool,
  projections: allProjections,
  log: f.log,
  pollInterval: 50,
});
t.teardown(() => projector.stop());
const db = await duckdb(t);
const dir = await mkdtemp(path.join(tmpdir(), "annal-extract-workflows-"));
const glob = (table: string) =>
  `read_parquet(${literal(path.join(dir, table, "*.parquet"))}, union_by_name = true)`;

const settledProjections = async () => {
  const head = await readHead(f.pool);
  for (const projection of allProjections) {
    await waitForProjection(f.pool, projection.name, head, 30_000);
  }
};

t.test("finished instances are closed rows, waiting ones open", async (t) => {
  const chain = await startWorkflow(f, {
    name: "chain",
    parameters: { steps: 3 },
    as: actor("alice"),
  });
  await f.settled(chain.instanceId, "COMPLETED");
  const hold = await startWorkflow(f, { name: "hold", parameters: {}, as: actor("bob") });
  await f.settled(hold.instanceId, "WAITING");
  await settledProjections();
  const first = await extractToFolder(f.pool, { dir });
  const instances = first.tables.find((table) => table.name === "workflow_instances")!;
  t.same(
    instances.files.map((file) => file.replace(/-r\d+-\d+/, "")),
    ["workflow_instances/closed.parquet", "workflow_instances/open.parquet"],
  );
  const rows = await db.rows(
    `SELECT instance_id::VARCHAR AS id, definition, status, started_by, (result->>'total')::INTEGER AS total
       FROM ${glob("workflow_instances")} ORDER BY definition`,
  );
  t.match(rows, [
    { id: chain.instanceId, definition: "chain", status: "COMPLETED", total: 3 },
    { id: hold.instanceId, definition: "hold", status: "WAITING" },
  ]);
  const steps = await db.rows(
    `SELECT s.name, s.kind, s.state FROM ${glob("workflow_steps")} AS s
      WHERE s.instance_id = ${literal(chain.instanceId)} ORDER BY s.seq`,
  );
  t.same(
    steps.map((step) => step.name),
    ["add 0", "add 1", "add 2"],
  );

  const again = await extractToFolder(f.pool, { dir });
  const [counted] = await db.rows(
    `SELECT count(*)::INTEGER AS n, count(DISTINCT instance_id)::INTEGER AS d FROM ${glob("workflow_instances")}`,
  );
  t.same(counted, { n: 2, d: 2 }, "each instance once after a second run");
  t.equal(again.tables.find((table) => table.name === "workflow_instances")!.rows, 0);
});
