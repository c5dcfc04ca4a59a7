/** Task 1, solved: the step, with a retry policy of 3 attempts from 1 second apart. */
import { bind, defineWorkflow } from "annal";
import { z } from "zod";

export interface Accounts {
  create(uid: string): Promise<string> | string;
}

export default defineWorkflow({
  name: "exercise-first-step",
  version: 1,
  parameters: z.object({ uid: z.string().min(1) }),
  bindings: {
    accounts: bind.service<Accounts>(() => ({ create: (uid) => `account-${uid}` })),
  },
  async run(flow, { uid }) {
    const account = await flow.step(
      "create account",
      ({ bindings }) => bindings.accounts.create(uid),
      { retry: { maxAttempts: 3, initialDelay: "1s" } },
    );
    return { uid, account: account as string | null };
  },
});
