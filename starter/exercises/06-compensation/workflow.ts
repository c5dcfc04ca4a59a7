/**
 * Task 6: a compensation after a failed step. Read README.md, then complete `run` below until
 * `npx annal exercise 6` passes.
 */
import { bind, defineWorkflow } from "annal";
import { z } from "zod";

/** The mail system and the directory, as the steps use them. */
export interface Provisioning {
  /** Creates the mailbox; returns its address. */
  createMailbox(uid: string): Promise<string> | string;
  /** Deletes the mailbox: what undoes createMailbox. */
  deleteMailbox(address: string): Promise<void> | void;
  /** Adds the account to the group; throws NonRetryableError for a group that does not exist. */
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
    await flow.step(
      "add to group",
      ({ bindings }) => bindings.provisioning.addToGroup(uid, group),
      {
        retry: { maxAttempts: 2, initialDelay: "1s" },
      },
    );
    // TODO: when "add to group" fails for good (it throws), undo what was done: delete the
    // mailbox in a step named "delete mailbox", then complete with
    // { uid, provisioned: false, reason: <the error's message> } instead of erroring.
    return { uid, provisioned: true, mailbox };
  },
});
