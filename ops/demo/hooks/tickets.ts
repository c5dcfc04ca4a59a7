/**
 * The ticket system's updates: `POST /-hooks/tickets/updates`, signed with the secret in
 * TICKETS_WEBHOOK_SECRET (the demo falls back to "demo-tickets-secret").
 *
 * A ticket annal asked for (the joiner's laptop: `flow.request("tickets", …)`) carries the
 * request's key; the ticket system sends it back with every update of the ticket. An update
 * that closes the ticket (`done` or `rejected`) answers the waiting request with
 * `context.workflows.answer(key, …)`, and the workflow goes on; others (`in_progress`) are
 * only noted. A key no request has, or one answered otherwise before, is a permanent failure
 * (under failed work); the same update again changes nothing.
 *
 * Try it: the joiner leaves its ticket in .annal/outbox/tickets/, with its key and this
 * command filled in:
 *
 *   WEBHOOK_SECRET=demo-tickets-secret npm run annal -- hooks send tickets/updates \
 *     --body '{"id":"t-1","key":"<the key>","status":"done","asset":"LT-0001",
 *     "at":"2026-11-24T09:30:00Z"}'
 */
import { z } from "zod";
import { defineHooks, http, PermanentFailure } from "annal";

const update = z.object({
  /** The ticket system's id of this update: resending it is harmless. */
  id: z.string().min(1).max(200),
  /** The key annal sent the ticket with (`<instance id>:<call>`). */
  key: z.string().min(1).max(200),
  status: z.enum(["in_progress", "done", "rejected"]),
  /** The laptop handed over, when done. */
  asset: z.string().min(1).max(100).optional(),
  comment: z.string().max(1000).optional(),
  /**
   * When it happened in the ticket system. Required: a resend must be the same change event,
   * which a default of "now" would not be.
   */
  at: z.iso.datetime({ offset: true }),
});

/** What the provider finds in `envelope.data`: checked again, as stored events outlive code. */
const updateData = update.omit({ id: true, at: true });

export default defineHooks({
  name: "tickets",
  webhooks: {
    updates: http.webhook({
      body: update,
      signature: {
        secrets: [
          "${TICKETS_WEBHOOK_SECRET:-demo-tickets-secret}",
          "${TICKETS_WEBHOOK_SECRET_PREVIOUS:-}",
        ],
      },
      map: ({ id, at, ...data }) => ({
        source: "tickets",
        eventId: id,
        type: `ticket.${data.status}`,
        // One ticket's updates are processed in the order they came.
        subject: data.key,
        occurredAt: at,
        data,
      }),
    }),
  },
  provider: {
    retry: { limit: 5, delay: "10s", maxDelay: "10m" },
    async process(envelope, context) {
      const { key, status, asset, comment } = updateData.parse(envelope.data);
      context.log.info({ key, status }, "ticket update received");
      if (status === "in_progress") return { answered: false };
      if (!context.workflows) {
        throw new PermanentFailure("this annal runs no workflow engine to answer tickets", {
          code: "TICKETS_NO_WORKFLOWS",
        });
      }
      const answer = {
        status,
        ...(asset === undefined ? {} : { asset }),
        ...(comment === undefined ? {} : { comment }),
      };
      try {
        const { instanceId, recorded } = await context.workflows.answer(key, answer);
        return { answered: true, instanceId, recorded };
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        // No request has the key, it was answered otherwise, or the answer does not fit:
        // another attempt cannot mend that. WF_LOCKED and the like are retried.
        if (code === "WF_NOT_FOUND" || code === "WF_CONFLICT" || code === "WF_VALIDATION") {
          throw new PermanentFailure((error as Error).message, { code, cause: error });
        }
        throw error;
      }
    },
  },
});
