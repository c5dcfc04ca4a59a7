/**
 * Task 2: a dialog with a schema, and an escalation when nobody answers. Read README.md, then
 * complete the dialog below until `npx annal exercise 2` passes.
 */
import { defineWorkflow } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "exercise-dialog-escalation",
  version: 1,
  parameters: z.object({
    group: z.string().min(1),
    reason: z.string().min(3),
    /** The group's owner (a DN), who decides. */
    owner: z.string().min(1),
    /** The owner's manager (a DN), asked too when the owner has not answered in 2 days. */
    manager: z.string().min(1),
  }),
  async run(flow, { group, reason, owner }) {
    const { answer, by } = await flow.dialog({
      name: "approve",
      assignees: [owner],
      // TODO: a schema that takes only { approved: boolean, comment?: string }.
      schema: z.unknown(),
      data: { group, reason },
      // TODO: an escalation: after 2 days the manager may answer as well as the owner; after
      // 1 more day without an answer, the dialog ends with
      // { approved: false, comment: "nobody decided" }.
    });
    // TODO: once the schema says what an answer is, return `answer.approved` here.
    return { approved: answer !== undefined, by: by.name };
  },
});
