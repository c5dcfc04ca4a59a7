import t from "tap";
import { readStream } from "../../src/store/index.ts";
import { startWorkflow } from "../../src/workflow/index.ts";
import { actor, definitionsDir, workflowFixture } from "../support/workflow.ts";

t.setTimeout(180_000);

const CHAIN = `
import { defineWorkflow } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "chain",
  version: 1,
  parameters: z.object({ steps: z.number().int().min(0) }),
  async run(flow, { steps }) {
    for (let i = 0; i < steps; i++) await flow.step("step " + i, () => i);
    return steps;
  },
});
`;

t.test(
  "steps of instances advancing at once share transactions, each instance's history intact",
  async (t) => {
    const dir = definitionsDir(t, { "chain.ts": CHAIN });
    const f = await workflowFixture(t, { dir });
    const ids = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const { instanceId } = await startWorkflow(f, {
          name: "chain",
          parameters: { steps: 30 },
          as: actor("alice"),
        });
        return instanceId;
      }),
    );
    const transactions = new Set<string>();
    let scheduled = 0;
    for (const id of ids) {
      const done = await f.settled(id, "COMPLETED");
      t.equal(done.result, 30);
      const events = await readStream(f.pool, `workflow-${id}`);
      t.same(
        events.map((event) => event.streamVersion),
        events.map((_, index) => index + 1),
        "versions without gaps",
      );
      for (const event of events.filter((each) => each.type === "StepScheduled")) {
        scheduled++;
        transactions.add(event.transactionId);
      }
    }
    t.equal(scheduled, 8 * 30);
    t.ok(
      transactions.size < scheduled,
      `${scheduled} steps committed in ${transactions.size} transactions`,
    );
  },
);
