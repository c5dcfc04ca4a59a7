/**
 * Task 3: a request answered by a change event. Read README.md, then complete `run` below
 * until `npx annal exercise 3` passes.
 */
import { bind, defineWorkflow, type RequestSender } from "annal";
import { z } from "zod";

/** What the ticket system answers, as its webhook passes it on. */
export const ticketAnswer = z.object({
  status: z.enum(["done", "rejected"]),
  asset: z.string().optional(),
});

export default defineWorkflow({
  name: "exercise-request-answer",
  version: 1,
  parameters: z.object({ uid: z.string().min(1) }),
  bindings: {
    // The ticket system: a real project binds it with bind.rest("tickets"); a test, a fixture.
    tickets: bind.service<RequestSender>(() => ({ send: () => "queued" })),
  },
  async run(flow, { uid }) {
    // TODO: ask the ticket system for a laptop with flow.request through the `tickets` binding,
    // sending { type: "laptop", for: uid }, and wait up to 14 days for an answer that
    // ticketAnswer accepts.
    // TODO: return { uid, laptop: <the answer> }, or { uid, laptop: null } when 14 days pass
    // without one (the request throws TimeoutError then).
    return { uid, laptop: null as z.output<typeof ticketAnswer> | null };
  },
});
