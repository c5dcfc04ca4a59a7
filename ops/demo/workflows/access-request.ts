/**
 * access-request: a person asks to join a group, and the group's owner decides.
 *
 * Started by the person who wants to join (any signed-in person with a directory entry), e.g.
 * through GraphQL:
 *
 *   mutation { startWorkflow(name: "access-request",
 *     parameters: { group: "on-call", reason: "I join the rota in March" }) { id status } }
 *
 * and the owner answers from their inbox (`myDialogs`) with
 *
 *   mutation { completeDialog(id: "<the dialog's id>", answer: { approved: true }) { state } }
 *
 * Parameters (`parameters` below):
 *   group   the group's cn ("on-call") or its DN ("cn=on-call,ou=groups,dc=example,dc=org")
 *   reason  why, 3 to 500 characters: the owner reads it
 *
 * Dialog "approve" (answered with completeDialog; the answer is `decision` below), one dialog
 * with an escalation chain, counted in working days of the "office" calendar of annal.toml
 * (Berlin's holidays):
 *   1. assigned to the group's owners (its `owner` DNs);
 *   2. after 3 working days the first owner's manager (`manager` in the directory) is added;
 *   3. after 2 more the operators, cn=annal-operators,ou=roles, are added too;
 *   4. after 3 more nobody has answered: the request expires.
 *   A group with no owner (the roles under ou=roles have none), or whose only owner asks,
 *   goes to the operators at once, until 5 working days.
 *   answer                 { "approved": true | false, "comment"?: "at most 500 characters" }
 *   data (what the form shows)  { group, groupName, requester: { name, dn }, reason, why? }
 *
 * Result: { outcome, group, member, decidedBy?, comment?, escalated }, where outcome is
 * "approved" (the membership is in the directory), "denied", "expired" (nobody answered) or
 * "already a member", and escalated tells whether someone other than an owner was asked.
 *
 * The membership is added by a step acting for the approver (`{ as: by }`): the directory write
 * is made as them (proxied authorization), and the change annal captures names this instance,
 * the step and the approver. Nothing is written before someone approved.
 */
import { bind, defineWorkflow, managerOf, NonRetryableError, TimeoutError, type Flow } from "annal";
import { z } from "zod";
import { addMember, findGroup, OPERATORS, sameDN, values } from "./shared/directory.ts";

// The titles and descriptions are the start form's labels and hints; `x-annal-entry` makes
// the group a directory picker that searches the groups as the person types.
const parameters = z.object({
  group: z.string().trim().min(1).max(500).meta({
    title: "Group",
    description: "The group you want to join: type part of its name and pick it.",
    "x-annal-entry": "group",
  }),
  reason: z.string().trim().min(3).max(500).meta({
    title: "Reason",
    description: "Why you need it, for the group's owner to read (3 to 500 characters).",
  }),
});

/** The answer to either dialog. Its JSON Schema is the form the inbox shows. */
const decision = z.object({
  approved: z.boolean().meta({ title: "Approve", description: "Tick to let them in." }),
  comment: z
    .string()
    .max(500)
    .optional()
    .meta({ title: "Comment", description: "Optional: the requester reads it." }),
});

/** What the approver sees about the request (the dialog's `data`). */
interface Ask {
  readonly group: string;
  readonly groupName: string;
  readonly requester: { readonly name: string; readonly dn: string };
  readonly reason: string;
  readonly why?: string;
}

/**
 * Asks for a decision: the owners, then (while nobody answers) the first owner's manager, then
 * the operators; with no owner to ask, the operators at once. Undefined when nobody answered
 * before the chain's end: a TimeoutError thrown at the dialog once the database's clock passes it.
 */
async function decide(flow: Pick<Flow, "dialog">, owners: readonly string[], ask: Ask) {
  try {
    return await flow.dialog(
      owners.length > 0
        ? {
            name: "approve",
            assignees: owners,
            schema: decision,
            data: ask,
            escalation: {
              levels: [
                { after: "3bd", assignees: managerOf(owners[0]!), mode: "add" },
                { after: "2bd", assignees: [OPERATORS], mode: "add" },
              ],
              final: { after: "3bd" },
            },
          }
        : { name: "approve", assignees: [OPERATORS], schema: decision, until: "5bd", data: ask },
    );
  } catch (error) {
    if (error instanceof TimeoutError) return undefined;
    throw error;
  }
}

export default defineWorkflow({
  name: "access-request",
  version: 1,
  title: "Ask to join a group",
  parameters,
  bindings: { directory: bind.directory() },
  // The chain ends after 8 working days; past 9 the instance times out.
  until: { businessDays: 9 },
  access: { start: [] }, // every signed-in account may ask
  async run(flow, { group, reason }) {
    // Who asks is who started it: nobody can ask on someone else's behalf.
    const requester = flow.startedBy;
    if (!requester.dn) {
      throw new NonRetryableError(`${requester.name} has no directory entry to add to a group`, {
        code: "ACCESS_REQUEST_NO_ENTRY",
      });
    }
    const member = requester.dn;

    // Everything from outside comes through a step: recorded once, replayed from the log.
    const target = await flow.step("find the group", async ({ bindings }) => {
      const entry = await findGroup(bindings.directory, group);
      if (!entry) {
        throw new NonRetryableError(`there is no group ${group}`, {
          code: "ACCESS_REQUEST_UNKNOWN_GROUP",
        });
      }
      return {
        dn: entry.dn,
        name: values(entry, "cn")[0] ?? entry.dn,
        owners: values(entry, "owner"),
        isMember: values(entry, "member").some((dn) => sameDN(dn, member)),
      };
    });
    const result = { group: target.dn, member };
    if (target.isMember) return { outcome: "already a member", ...result, escalated: false };

    const ask: Ask = {
      group: target.dn,
      groupName: target.name,
      requester: { name: requester.name, dn: member },
      reason,
    };
    // An owner asking for their own group does not decide it: someone else does.
    const owners = target.owners.filter((owner) => !sameDN(owner, member));
    const answered = await decide(
      flow,
      owners,
      owners.length > 0
        ? ask
        : {
            ...ask,
            why:
              target.owners.length > 0
                ? "the requester is its only owner"
                : "the group has no owner",
          },
    );
    if (!answered) return { outcome: "expired", ...result, escalated: true };

    const { answer, by } = answered;
    const escalated = !owners.some((owner) => by.dn !== null && sameDN(owner, by.dn));
    const decided = { decidedBy: by.name, ...(answer.comment ? { comment: answer.comment } : {}) };
    // An operator may be the requester too: nobody approves their own request.
    if (by.accountId === requester.accountId && answer.approved) {
      return {
        outcome: "denied",
        ...result,
        decidedBy: by.name,
        comment: "a request cannot be approved by the person who made it",
        escalated,
      };
    }
    if (!answer.approved) return { outcome: "denied", ...result, ...decided, escalated };

    // The write is made as the approver: the captured change names them, this instance and
    // this step. `addMember` checks first, so a second attempt after a crash adds nothing twice.
    await flow.step(
      "add the member",
      ({ bindings }) => addMember(bindings.directory, target.dn, member),
      { as: by },
    );
    return { outcome: "approved", ...result, ...decided, escalated };
  },
});
