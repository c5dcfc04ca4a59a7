/**
 * Task 5: a deadline in working days. Read README.md, then complete the dialog below until
 * `npx annal exercise 5` passes.
 */
import { defineWorkflow, TimeoutError } from "annal";
import { z } from "zod";

export default defineWorkflow({
  name: "exercise-business-deadline",
  version: 1,
  parameters: z.object({ uid: z.string().min(1), reviewer: z.string().min(1) }),
  async run(flow, { uid, reviewer }) {
    try {
      const { answer } = await flow.dialog({
        name: "review",
        assignees: [reviewer],
        schema: z.object({ keep: z.boolean() }),
        data: { uid },
        // TODO: the reviewer has 3 working days (of the calendar "office"), not 3 days.
        until: "3d",
      });
      return { uid, keep: answer.keep };
    } catch (error) {
      if (!(error instanceof TimeoutError)) throw error;
      // TODO: record when the review expired: the database's clock, as flow.now() gives it,
      // as an ISO 8601 string.
      return { uid, keep: true, expiredAt: null as string | null };
    }
  },
});
