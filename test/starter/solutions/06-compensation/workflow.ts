/** Task 6, solved: the failed step is caught, and a step undoes the one before it. */
import { bind, defineWorkflow } from "annal";
import { z } from "zod";

export interface Provisioning {
  createMailbox(uid: string): Promise<string> | string;
  deleteMailbox(address: string): Promise<void> | void;
  addToGroup(uid: string, group: string): Promise<void> | void;
}

export default defineWorkflow({
  name: "exercise-compensation",
  version: 1,
  parameters: z.object({ uid: z.string().min(1), group: z.string().min(1) }),
  bindings: {
    provisioning: bind.service<Provisioning>(() => ({
      createMailbox: (uid) => `${uid}@example.org`,
      deleteMailbox: () => {},
      addToGroup: () => {},
    })),
  },
  async run(flow, { uid, group }) {
    const mailbox = await flow.step("create mailbox", ({ bindings }) =>
      bindings.provisioning.createMailbox(uid),
    );
    try {
      await flow.step(
        "add to group",
        ({ bindings }) => bindings.provisioning.addToGroup(uid, group),
        { retry: { maxAttempts: 2, initialDelay: "1s" } },
      );
    } catch (error) {
      await flow.step("delete mailbox", ({ bindings }) =>
        bindings.provisioning.deleteMailbox(mailbox),
      );
      return { uid, provisioned: false, reason: (error as Error).message };
    }
    return { uid, provisioned: true, mailbox };
  },
});
