/**
 * Task 1: a first step and its retry. Read README.md, then complete `run` below until
 * `npx annal exercise 1` passes.
 */
import { bind, defineWorkflow } from "annal";
import { z } from "zod";

/** The account system the step calls (a test gives a fixture in its place). */
export interface Accounts {
  /** Creates the account for `uid` and returns its id; throws when the system is busy. */
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
    // TODO: create the account in a step named "create account" that calls
    // bindings.accounts.create(uid), tried at most 3 times, 1 second apart at first.
    // TODO: return the account's id as `account`.
    return { uid, account: null as string | null };
  },
});
