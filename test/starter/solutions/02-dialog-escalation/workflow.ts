/** Task 2, solved: the answer's schema, and an escalation chain to the manager, then a refusal. */
import { defineWorkflow } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "exercise-dialog-escalation",
  version: 1,
  parameters: z.object({
    group: z.string().min(1),
    reason: z.string().min(3),
    owner: z.string().min(1),
    manager: z.string().min(1),
  }),
  async run(flow, { group, reason, owner, manager }) {
    const { answer, by } = await flow.dialog({
      name: "approve",
      assignees: [owner],
      schema: z.object({ approved: z.boolean(), comment: z.string().optional() }),
      data: { group, reason },
      escalation: {
        levels: [{ after: "2d", assignees: [manager], mode: "add" }],
        final: { after: "1d", answer: { approved: false, comment: "nobody decided" } },
      },
    });
    return { approved: answer.approved, by: by.name };
  },
});
