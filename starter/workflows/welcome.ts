/**
 * An example workflow: a newcomer's manager confirms the start date, and a reminder goes out
 * when they have not answered within 3 days. `tests/welcome.test.ts` runs it with
 * `annal/testing`; `npm start` deploys it (annal.toml's [workflows] dir).
 */
import { bind, defineWorkflow, TimeoutError } from "annal";
import { z } from "zod";

/** What the workflow needs from elsewhere: here, a way to send a message. */
export interface Mailer {
  send(to: string, text: string): Promise<string> | string;
}

export default defineWorkflow({
  name: "welcome",
  version: 1,
  parameters: z.object({ uid: z.string().min(1), manager: z.string().min(1) }),
  bindings: {
    mailer: bind.service<Mailer>(() => ({ send: (to) => `logged a message to ${to}` })),
  },
  until: "30d",
  async run(flow, { uid, manager }) {
    await flow.step("greet", ({ bindings }) => bindings.mailer.send(uid, "Welcome!"));
    try {
      const { answer, by } = await flow.dialog({
        name: "confirm-start",
        assignees: [`uid=${manager},ou=people,dc=example,dc=org`],
        schema: z.object({ startsOn: z.string() }),
        until: "3d",
      });
      return { uid, startsOn: answer.startsOn, confirmedBy: by.name };
    } catch (error) {
      if (!(error instanceof TimeoutError)) throw error;
      await flow.step("remind", ({ bindings }) =>
        bindings.mailer.send(manager, `Please confirm when ${uid} starts.`),
      );
      return { uid, startsOn: null, reminded: manager };
    }
  },
});
