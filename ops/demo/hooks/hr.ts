/**
 * The demo's hooks file: an HR system posts employee changes to
 * `POST /-hooks/hr/employees`, signed with the secret in HR_WEBHOOK_SECRET (the demo falls
 * back to "demo-hr-secret"; a real hooks file writes "${HR_WEBHOOK_SECRET}" with no default).
 *
 * The provider notes each change in the event log and, when annal has a directory, sets the
 * person's `title`. An employee the directory does not know is a permanent failure: it shows
 * under failed work (`annal failed-work list`) and can be retried once the person exists.
 *
 * Try it (annal running with the demo configuration):
 *
 *   annal hooks send hr/employees --body '{"id":"hr-1","kind":"employee.updated",
 *     "at":"2026-11-22T08:30:00Z","employee":{"uid":"prossi","title":"Head of Research"}}'
 */
import { z } from "zod";
import { eq } from "../../../src/directory/index.ts";
// In a project of your own: import { defineHooks, http, PermanentFailure } from "annal";
import { defineHooks, http, PermanentFailure } from "../../../src/index.ts";

const employeeChange = z.object({
  /** The HR system's id of this change: resending it is harmless. */
  id: z.string().min(1).max(200),
  kind: z.enum(["employee.hired", "employee.updated", "employee.left"]),
  at: z.iso.datetime({ offset: true }),
  employee: z.object({
    uid: z.string().regex(/^[a-z0-9._-]{1,64}$/),
    title: z.string().min(1).max(200).optional(),
  }),
});

/** One change, or up to 100 at once: `{ "events": [ ... ] }`. */
const body = z.union([
  employeeChange,
  z.object({ events: z.array(employeeChange).min(1).max(100) }),
]);

/** What the provider finds in `envelope.data`: checked again, as stored events outlive code. */
const employeeData = z.object({ uid: z.string(), title: z.string().optional() });

export default defineHooks({
  name: "hr",
  webhooks: {
    employees: http.webhook({
      body,
      signature: {
        // The new secret first; during a rotation the old one in HR_WEBHOOK_SECRET_PREVIOUS.
        secrets: ["${HR_WEBHOOK_SECRET:-demo-hr-secret}", "${HR_WEBHOOK_SECRET_PREVIOUS:-}"],
      },
      maxClockSkew: "5m",
      limits: { bodyBytes: 256 * 1024, envelopes: 100 },
      rateLimit: { requests: 50, per: "1s" },
      map: (payload) =>
        ("events" in payload ? payload.events : [payload]).map((change) => ({
          source: "hr",
          eventId: change.id,
          type: change.kind,
          subject: change.employee.uid,
          occurredAt: change.at,
          data: change.employee,
        })),
    }),
  },
  provider: {
    retry: { limit: 5, delay: "10s", maxDelay: "10m" },
    async process(envelope, context) {
      const employee = employeeData.parse(envelope.data);
      context.log.info({ uid: employee.uid, kind: envelope.type }, "HR change received");
      await context.record({
        type: "EmployeeChangeNoted",
        data: { uid: employee.uid, kind: envelope.type, title: employee.title ?? null },
      });
      const directory = context.directory;
      if (!directory || employee.title === undefined || envelope.type === "employee.left") {
        return { directory: "unchanged" };
      }
      const found: string[] = [];
      for await (const page of directory.search(`ou=people,${directory.base}`, {
        filter: eq("uid", employee.uid),
        attributes: ["title"],
        sizeLimit: 2,
      })) {
        found.push(...page.map((entry) => entry.dn));
      }
      if (found.length !== 1) {
        throw new PermanentFailure(
          found.length === 0
            ? `no person with uid ${employee.uid} in the directory`
            : `more than one person has uid ${employee.uid}`,
          { code: "HR_UNKNOWN_EMPLOYEE" },
        );
      }
      // The write is recorded in ChangeEventProcessed (directoryWrites), caused by this change event.
      await directory.modify(found[0]!, [
        { operation: "replace", attribute: "title", values: employee.title },
      ]);
      return { directory: "title set", dn: found[0] };
    },
  },
});
