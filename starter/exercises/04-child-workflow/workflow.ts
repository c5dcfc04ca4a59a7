/**
 * Task 4: a child workflow. Read README.md, then complete the parent, `onboarding`, until
 * `npx annal exercise 4` passes. The child, `addGroups`, is done: leave it as it is.
 */
import { bind, defineWorkflow } from "annal";
import { z } from "zod";

/** The directory's groups, as the child's steps use them. */
export interface Groups {
  add(member: string, group: string): Promise<void> | void;
}

/** The child: adds `member` to each group, one step per group, and returns the groups added. */
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

/** The parent: onboards a person, with the child doing the groups. */
const onboarding = defineWorkflow({
  name: "exercise-onboarding",
  version: 1,
  parameters: z.object({ uid: z.string().min(1), department: z.string().min(1) }),
  async run(flow, { uid, department }) {
    const member = `uid=${uid},ou=${department},ou=people,dc=example,dc=org`;
    const groups = [department, "vpn-users"];
    // TODO: start the child exercise-add-groups (version 1) with { member, groups }, wait for
    // its result, and return its `added` as `groups` below.
    return { uid, member, groups: groups.length > 0 ? [] : groups };
  },
});

export default onboarding;
