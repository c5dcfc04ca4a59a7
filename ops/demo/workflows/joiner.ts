/**
 * joiner: HR hired someone (`employee.hired`; ops/demo/hooks/hr.ts starts it once per change
 * event). Creates their entry, adds them to their department's default groups, and asks IT
 * for a laptop.
 *
 * Parameters (what HR's change event carries):
 *   uid, givenName, sn, mail, title, department (its ou: "engineering"), cn (default
 *   "<givenName> <sn>")
 *
 * 1. The entry `uid=<uid>,ou=<department>,ou=people,…` is created (inetOrgPerson), as annal
 *    itself: the start came from HR, not from a person. It has no password: the person sets
 *    one the way the organisation does that (the demo has no such way).
 * 2. A child workflow, default-groups, adds the department's default groups (the department's
 *    `seeAlso`), and the joiner waits for it.
 * 3. A laptop is requested from the ticket system: `flow.request` sends the ticket through the
 *    `tickets` binding with a key (in the demo: a file in .annal/outbox/tickets, see
 *    shared/outbox.ts) and waits up to 14 days for the ticket system's answer, which comes
 *    back as a change event on POST /-hooks/tickets/updates (ops/demo/hooks/tickets.ts):
 *      answer  { "status": "done" | "rejected", "asset"?: "LT-0042", "comment"?: "..." }
 *
 * Result: { uid, dn, groups: the groups added, laptop: the ticket's answer, or
 * { status: "no answer" } after 14 days }
 */
import { bind, defineWorkflow, NonRetryableError, TimeoutError } from "annal";
import { z } from "zod";
import { findPerson, sameDN } from "./shared/directory.ts";
import { outbox } from "./shared/outbox.ts";

/** The ticket system's answer, as its webhook passes it on. */
const ticketAnswer = z.object({
  status: z.enum(["done", "rejected"]),
  asset: z.string().max(100).optional(),
  comment: z.string().max(1000).optional(),
});

export default defineWorkflow({
  name: "joiner",
  version: 1,
  title: "Welcome a new employee",
  parameters: z.object({
    // uid is part of a DN: letters a DN never needs escaped, as HR's webhook checks too.
    uid: z.string().regex(/^[a-z0-9._-]{1,64}$/),
    givenName: z.string().min(1).max(100),
    sn: z.string().min(1).max(100),
    cn: z.string().min(1).max(200).optional(),
    mail: z.email().max(200),
    title: z.string().min(1).max(200),
    department: z.string().regex(/^[A-Za-z][A-Za-z0-9 ._-]{0,63}$/),
  }),
  bindings: {
    directory: bind.directory(),
    tickets: outbox(
      "tickets",
      (key) =>
        `answer it with: WEBHOOK_SECRET=demo-tickets-secret npm run annal -- hooks send tickets/updates --body '{"id":"<a new id>","key":"${key}","status":"done","asset":"LT-0001","at":"<now, ISO 8601>"}'`,
    ),
  },
  until: "15d", // the laptop's 14 days, and a day for everything else
  access: { start: ["operator"] }, // HR starts it; an operator may, by hand
  async run(flow, person) {
    const { uid, department } = person;
    const cn = person.cn ?? `${person.givenName} ${person.sn}`;

    const dn = await flow.step("create the entry", async ({ bindings }) => {
      const { directory } = bindings;
      // The department is an ou under ou=people; its DN, as the directory spells it.
      const departments = [];
      for await (const page of directory.search(`ou=people,${directory.base}`, {
        scope: "one",
        filter: {
          op: "and",
          filters: [
            { op: "eq", attribute: "objectClass", value: "organizationalUnit" },
            { op: "eq", attribute: "ou", value: department },
          ],
        },
        attributes: ["ou"],
        sizeLimit: 1,
      })) {
        departments.push(...page);
      }
      if (!departments[0]) {
        throw new NonRetryableError(`there is no department ${department} under ou=people`, {
          code: "DEMO_UNKNOWN_DEPARTMENT",
        });
      }
      const dn = `uid=${uid},${departments[0].dn}`;
      // Check first: an attempt that created the entry and died before its result was
      // recorded runs again, and finds it.
      const existing = await findPerson(directory, uid);
      if (existing) {
        if (sameDN(existing.dn, dn)) return dn;
        throw new NonRetryableError(`uid ${uid} is taken by ${existing.dn}`, {
          code: "DEMO_UID_TAKEN",
        });
      }
      await directory.add(dn, {
        objectClass: ["inetOrgPerson"],
        uid,
        cn,
        sn: person.sn,
        givenName: person.givenName,
        displayName: cn,
        mail: person.mail,
        title: person.title,
        ou: department,
        employeeType: "employee",
      });
      return dn;
    });

    // A child instance of its own: its steps, its writes and its result are its own, and the
    // joiner takes its result once it completes.
    const { added } = await flow.start<{ added: string[] }>("default-groups", 1, {
      member: dn,
      department,
    });

    let laptop: z.output<typeof ticketAnswer> | { status: "no answer" };
    try {
      laptop = await flow.request(
        "tickets",
        {
          type: "laptop",
          summary: `A laptop for ${cn}, who joins ${department}`,
          for: { uid, name: cn, mail: person.mail, department },
        },
        { until: "14d", schema: ticketAnswer },
      );
    } catch (error) {
      if (!(error instanceof TimeoutError)) throw error;
      laptop = { status: "no answer" };
    }
    return { uid, dn, groups: added, laptop };
  },
});
