/**
 * leaver: HR says someone left (`employee.left`; ops/demo/hooks/hr.ts starts it once per
 * change event). Their account is disabled and their memberships go at once; their entry is
 * deleted 30 days later, unless HR hires them again meanwhile.
 *
 * Parameters: { uid }
 *
 * 1. The account is disabled: the entry is marked `employeeType: disabled`, and the demo's
 *    directory refuses a bind with the password of a marked entry (an ACL in
 *    src/slapd/config.ts), so neither sign-in (the demo's OpenID provider, the directory's
 *    form) lets them in. The password itself is not touched: annal never reads or keeps it, so
 *    nothing secret enters the log, and taking the mark away restores the account as it was.
 *    (An OpenLDAP with the ppolicy overlay would set `pwdAccountLockedTime` instead.)
 * 2. Every group membership is removed, one step per group.
 * 3. HR is told the date the entry goes (a request through the `hr` binding: in the demo, a
 *    notice in .annal/outbox/hr) and the leaver waits up to 30 days for HR's answer. HR answers
 *    only by hiring the person again: the hook finds this instance by the uid and answers its
 *    request "hr" (context.workflows.answer({ instanceId, request: "hr" }, …)) with
 *      answer  { "rehired": true, "eventId": "<HR's change id>", "department"?: "engineering" }
 * 4. Rehired: the mark is taken away (the old password works again), and the person gets the
 *    default groups of the department they join (a child, default-groups); the memberships
 *    removed in 2 are not given back. Not rehired in 30 days (a TimeoutError at the request):
 *    the entry is deleted, and no group names it any more (a membership added since, the
 *    groups it owned).
 *
 * Result: { outcome: "rehired" | "deleted", uid, dn, removedFrom: group DNs, groups? }
 */
import { bind, defineWorkflow, NonRetryableError, TimeoutError } from "annal";
import { z } from "zod";
import {
  findPerson,
  forgetEverywhere,
  groupsOf,
  removeMember,
  values,
} from "./shared/directory.ts";
import { outbox } from "./shared/outbox.ts";

const DISABLED = "disabled";
const DAY = 24 * 3600 * 1000;

/** HR's answer: only a rehire ends the wait early. */
const rehire = z.object({
  rehired: z.literal(true),
  eventId: z.string(),
  department: z.string().optional(),
});

export default defineWorkflow({
  name: "leaver",
  version: 1,
  title: "Let an employee go",
  parameters: z.object({ uid: z.string().regex(/^[a-z0-9._-]{1,64}$/) }),
  bindings: {
    directory: bind.directory(),
    hr: outbox(
      "hr",
      () => "HR ends the wait by hiring the person again (employee.hired with the same uid)",
    ),
  },
  until: "32d", // the 30 days' wait, then time to delete
  access: { start: ["operator"] }, // HR starts it; an operator may, by hand
  async run(flow, { uid }) {
    // Disabling is the first thing done, and in one step with finding the person: the sooner
    // a leaver cannot sign in, the better.
    const dn = await flow.step("disable the account", async ({ bindings }) => {
      const person = await findPerson(bindings.directory, uid);
      if (!person) {
        throw new NonRetryableError(`no person with uid ${uid} in the directory`, {
          code: "HR_UNKNOWN_EMPLOYEE",
        });
      }
      if (!values(person, "employeeType").some((type) => type.toLowerCase() === DISABLED)) {
        await bindings.directory.modify(person.dn, [
          { operation: "add", attribute: "employeeType", values: DISABLED },
        ]);
      }
      return person.dn;
    });

    const groups = await flow.step("find the memberships", ({ bindings }) =>
      groupsOf(bindings.directory, dn),
    );
    for (const group of groups) {
      await flow.step(`leave ${group}`, ({ bindings }) =>
        removeMember(bindings.directory, group, dn),
      );
    }

    // The deletion date, from the database's clock as recorded: a replay computes the same.
    const deleteAfter = new Date(flow.now().getTime() + 30 * DAY).toISOString();
    try {
      const answer = await flow.request(
        "hr",
        { notice: "account disabled, entry to be deleted", uid, dn, deleteAfter },
        { until: "30d", schema: rehire },
      );
      await flow.step("enable the account", async ({ bindings }) => {
        const person = await bindings.directory.get(dn, { attributes: ["employeeType"] });
        const marks = person
          ? values(person, "employeeType").filter((type) => type.toLowerCase() === DISABLED)
          : [];
        if (marks.length > 0) {
          await bindings.directory.modify(dn, [
            { operation: "delete", attribute: "employeeType", values: marks },
          ]);
        }
      });
      const joined = answer.department
        ? await flow.start<{ added: string[] }>("default-groups", 1, {
            member: dn,
            department: answer.department,
          })
        : { added: [] };
      return { outcome: "rehired", uid, dn, removedFrom: groups, groups: joined.added };
    } catch (error) {
      if (!(error instanceof TimeoutError)) throw error;
    }

    // 30 days and no rehire: the entry goes, and with it every group's mention of it (a
    // membership given since, the groups they owned: those go to the operators from now on).
    await flow.step("delete the entry", async ({ bindings }) => {
      const { directory } = bindings;
      await forgetEverywhere(directory, dn);
      if (await directory.get(dn, { attributes: ["uid"] })) await directory.delete(dn);
    });
    return { outcome: "deleted", uid, dn, removedFrom: groups };
  },
});
