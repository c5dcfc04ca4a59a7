/**
 * The demo's stand-in for systems annal talks to but does not run (a ticket system, HR): a
 * binding whose `send` leaves each message as a JSON file in an outbox folder, for a person or
 * a test to pick up, and logs where it is. It never answers: the answer comes back the way a
 * real system's would, as a change event on a webhook (ops/demo/hooks/), correlated by the
 * request's key.
 *
 * In your own deployment, bind the real system instead: `bind.rest("tickets")` posts the
 * payload and the key to a `[[graphql.rest]]` backend, and its webhook brings the answer.
 *
 * The folder is ANNAL_DEMO_OUTBOX, or `.annal/outbox` in the directory annal runs in (where
 * the demo keeps its data), one subfolder per system: `.annal/outbox/tickets/<key>.json`.
 */
import { mkdir, rename, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { bind, type BindingContext } from "annal";

/** What the outbox returns for a message, recorded as the result of the request's send. */
export interface Posted {
  readonly system: string;
  readonly key: string;
  readonly file: string;
}

/**
 * A binding for `flow.request(name, payload)` that posts to `system`'s outbox. `howToAnswer`
 * says, in the log and the file, how the message's answer gets back (for a person trying the
 * demo).
 */
export function outbox(system: string, howToAnswer: (key: string) => string) {
  return bind.service((context: BindingContext) => ({
    async send(payload: unknown, request: { readonly key: string }): Promise<Posted> {
      const folder = path.resolve(process.env.ANNAL_DEMO_OUTBOX ?? ".annal/outbox", system);
      // The key is `<instance id>:<call>`: safe in a file name once the colon is gone.
      const file = path.join(folder, `${request.key.replace(/[^A-Za-z0-9-]/g, "_")}.json`);
      // Sent once per key: a send retried after a crash finds its file and leaves it as it is.
      if (!(await exists(file))) {
        await mkdir(folder, { recursive: true });
        const message = {
          system,
          key: request.key,
          instanceId: context.instanceId,
          payload,
          answer: howToAnswer(request.key),
        };
        // Written whole or not at all: a reader never sees half a message.
        const partial = `${file}.${process.pid}.partial`;
        await writeFile(partial, `${JSON.stringify(message, null, 2)}\n`);
        await rename(partial, file);
      }
      context.log.info(
        { system, key: request.key, file },
        `${system}: a message is in the outbox; ${howToAnswer(request.key)}`,
      );
      return { system, key: request.key, file };
    },
  }));
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}
