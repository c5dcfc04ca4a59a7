/** Task 5, solved: 3 working days of the office's calendar, and the moment it expired. */
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
        until: { businessDays: 3, calendar: "office" },
      });
      return { uid, keep: answer.keep };
    } catch (error) {
      if (!(error instanceof TimeoutError)) throw error;
      return { uid, keep: true, expiredAt: flow.now().toISOString() as string | null };
    }
  },
});
