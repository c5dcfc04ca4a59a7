/** Task 3, solved: a request through the ticket system, its answer checked, 14 days to come. */
import { bind, defineWorkflow, TimeoutError, type RequestSender } from "annal";
import { z } from "zod";

export const ticketAnswer = z.object({
  status: z.enum(["done", "rejected"]),
  asset: z.string().optional(),
});

export default defineWorkflow({
  name: "exercise-request-answer",
  version: 1,
  parameters: z.object({ uid: z.string().min(1) }),
  bindings: {
    tickets: bind.service<RequestSender>(() => ({ send: () => "queued" })),
  },
  async run(flow, { uid }) {
    try {
      const laptop = await flow.request(
        "tickets",
        { type: "laptop", for: uid },
        { until: "14d", schema: ticketAnswer },
      );
      return { uid, laptop };
    } catch (error) {
      if (!(error instanceof TimeoutError)) throw error;
      return { uid, laptop: null };
    }
  },
});
