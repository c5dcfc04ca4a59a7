/**
 * The demo's access request (ops/demo/workflows/access-request.ts) with another approval rule,
 * to try with `annal simulate` before it goes live: the group's owner approves as before, and
 * then the owner's manager must confirm it too (within 3 working days, or the request is
 * denied). Nothing else changes, so the report shows only what the second approval changes.
 *
 *   npm run annal -- simulate examples/simulate/access-request-two-approvers.ts \
 *     --from now-90d --to now
 */
import { bind, defineWorkflow, managerOf, NonRetryableError, TimeoutError } from "annal";
import { z } from "zod";
import {
  addMember,
  findGroup,
  OPERATORS,
  sameDN,
  values,
} from "../../ops/demo/workflows/shared/directory.ts";

const decision = z.object({ approved: z.boolean(), comment: z.string().max(500).optional() });

export default defineWorkflow({
  name: "access-request",
  version: 2,
  title: "Ask to join a group (owner and manager)",
  parameters: z.object({
    group: z.string().trim().min(1).max(500),
    reason: z.string().trim().min(3).max(500),
  }),
  bindings: { directory: bind.directory() },
  until: { businessDays: 12 },
  async run(flow, { group, reason }) {
    const member = flow.startedBy.dn;
    if (!member) throw new NonRetryableError(`${flow.startedBy.name} has no directory entry`);
    const target = await flow.step("find the group", async ({ bindings }) => {
      const entry = await findGroup(bindings.directory, group);
      if (!entry) throw new NonRetryableError(`there is no group ${group}`);
      const owners = values(entry, "owner").filter((owner) => !sameDN(owner, member));
      const manager = owners[0]
        ? values((await bindings.directory.get(owners[0], { attributes: ["manager"] }))!, "manager")
        : [];
      return {
        dn: entry.dn,
        owners,
        managers: manager,
        isMember: values(entry, "member").some((dn) => sameDN(dn, member)),
      };
    });
    const result = { group: target.dn, member };
    if (target.isMember) return { outcome: "already a member", ...result };
    const data = { group: target.dn, requester: { name: flow.startedBy.name, dn: member }, reason };
    const ask = async (name: string, assignees: string[], escalate: boolean) => {
      try {
        const escalation = {
          levels: [
            { after: "3bd", assignees: managerOf(target.owners[0]!), mode: "add" as const },
            { after: "2bd", assignees: [OPERATORS], mode: "add" as const },
          ],
          final: { after: "3bd" },
        };
        return await flow.dialog({
          name,
          assignees,
          schema: decision,
          data,
          ...(escalate && target.owners.length > 0 ? { escalation } : { until: "3bd" }),
        });
      } catch (error) {
        if (error instanceof TimeoutError) return undefined;
        throw error;
      }
    };
    // The first approval, as the deployed version asks for it.
    const first = await ask(
      "approve",
      target.owners.length > 0 ? target.owners : [OPERATORS],
      true,
    );
    if (!first) return { outcome: "expired", ...result };
    if (!first.answer.approved) return { outcome: "denied", ...result, decidedBy: first.by.name };
    // The new rule: the owner's manager confirms (unless they approved already).
    const approvedByManager = target.managers.some((dn) => first.by.dn && sameDN(dn, first.by.dn));
    if (target.managers.length > 0 && !approvedByManager) {
      const second = await ask("confirm", target.managers, false);
      if (!second?.answer.approved) {
        return { outcome: second ? "denied" : "expired", ...result, decidedBy: second?.by.name };
      }
    }
    await flow.step(
      "add the member",
      ({ bindings }) => addMember(bindings.directory, target.dn, member),
      { as: first.by },
    );
    return { outcome: "approved", ...result, decidedBy: first.by.name };
  },
});
