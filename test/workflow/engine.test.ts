import t from "tap";
import { startWorkflow } from "../../src/workflow/index.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(120_000);

const CHAIN = `
import { defineWorkflow } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "chain",
  version: 1,
  parameters: z.object({ steps: z.number().int().min(0) }),
  async run(flow, { steps }) {
    let total = 0;
    for (let i = 0; i < steps; i++) {
      total = await flow.step("add " + i, () => total + i);
    }
    const id = flow.uuid();
    return { total, id };
  },
});
`;

t.test("an instance runs its steps in order and completes with the code's result", async (t) => {
  const dir = definitionsDir(t, { "chain.ts": CHAIN });
  const f = await workflowFixture(t, { dir });
  const { instanceId, created } = await startWorkflow(f, {
    name: "chain",
    parameters: { steps: 5 },
    as: actor("alice"),
  });
  t.ok(created);
  const done = await f.settled(instanceId, "COMPLETED");
  t.match(done.result, { total: 10, id: /^[0-9a-f-]{36}$/ });
  const steps = [...done.calls.values()].filter((c) => c.kind === "step");
  t.same(
    steps.map((c) => c.kind === "step" && c.name),
    ["add 0", "add 1", "add 2", "add 3", "add 4"],
  );
});
