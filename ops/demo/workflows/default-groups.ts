/**
 * default-groups: adds a person to their department's default groups. The joiner starts it as
 * a child for a new person, the leaver for a rehired one; an operator may start it by hand.
 *
 * Parameters:
 *   member      the person's DN
 *   department  the department's ou ("engineering"; compared ignoring case), whose entry
 *               under ou=people lists its default groups in `seeAlso` (src/demo/sample-data.ts)
 *
 * Result: { member, department, groups: the default groups' DNs, added: those this run added }
 *
 * One step per group: each write is its own recorded step (retried alone, named in the change
 * annal captures), and a group the person is in already is left as it is.
 */
import { bind, defineWorkflow, NonRetryableError } from "annal";
import { z } from "zod";
import { addMember, values } from "./shared/directory.ts";

export default defineWorkflow({
  name: "default-groups",
  version: 1,
  title: "Add a person to their department's default groups",
  parameters: z.object({
    member: z.string().min(3).max(1000),
    department: z.string().regex(/^[A-Za-z][A-Za-z0-9 ._-]{0,63}$/),
  }),
  bindings: { directory: bind.directory() },
  until: "1d",
  access: { start: ["operator"] },
  async run(flow, { member, department }) {
    const groups = await flow.step("find the default groups", async ({ bindings }) => {
      const { directory } = bindings;
      const found = [];
      for await (const page of directory.search(`ou=people,${directory.base}`, {
        scope: "one",
        filter: {
          op: "and",
          filters: [
            { op: "eq", attribute: "objectClass", value: "organizationalUnit" },
            { op: "eq", attribute: "ou", value: department },
          ],
        },
        attributes: ["seeAlso"],
        sizeLimit: 1,
      })) {
        found.push(...page);
      }
      if (!found[0]) {
        throw new NonRetryableError(`there is no department ${department} under ou=people`, {
          code: "DEMO_UNKNOWN_DEPARTMENT",
        });
      }
      return values(found[0], "seeAlso");
    });

    // The group list is the recorded result of the step above, so a replay makes the same
    // steps in the same order: step names may come from recorded data, never from outside.
    const added: string[] = [];
    for (const group of groups) {
      const joined = await flow.step(`join ${group}`, ({ bindings }) =>
        addMember(bindings.directory, group, member),
      );
      if (joined) added.push(group);
    }
    return { member, department, groups, added };
  },
});
