/** Task 4, solved: the parent starts the child and waits for its result. */
import { bind, defineWorkflow } from "annal";
import { z } from "zod";

export interface Groups {
  add(member: string, group: string): Promise<void> | void;
}

export const addGroups = defineWorkflow({
  name: "exercise-add-groups",
  version: 1,
  parameters: z.object({ member: z.string().min(1), groups: z.array(z.string()) }),
  bindings: { groups: bind.service<Groups>(() => ({ add: () => {} })) },
  async run(flow, { member, groups }) {
    for (const group of groups) {
      await flow.step(`add to ${group}`, ({ bindings }) => bindings.groups.add(member, group));
    }
    return { added: groups };
  },
});

const onboarding = defineWorkflow({
  name: "exercise-onboarding",
  version: 1,
  parameters: z.object({ uid: z.string().min(1), department: z.string().min(1) }),
  async run(flow, { uid, department }) {
    const member = `uid=${uid},ou=${department},ou=people,dc=example,dc=org`;
    const { added } = await flow.start<{ added: string[] }>("exercise-add-groups", 1, {
      member,
      groups: [department, "vpn-users"],
    });
    return { uid, member, groups: added };
  },
});

export default onboarding;
