import type { ChangeEventRef } from "../events/index.ts";
import type { Actor } from "./access.ts";
import type { EngineDeps } from "./advance.ts";
import { answerRequest, startWorkflow } from "./commands.ts";

/**
 * What a change event's provider may ask of the engine (`context.workflows` of a hooks
 * provider): start a workflow, answer a pending request. Both are idempotent per change event,
 * so a retried change event starts nothing twice; a start names the change event as its cause.
 */
export function workflowsForChangeEvent(deps: EngineDeps) {
  return (ref: ChangeEventRef) => {
    // annal itself acts for the change event: the definitions' start access is for people.
    const as: Actor = {
      accountId: `hook:${ref.hook}`,
      name: `hook ${ref.hook}/${ref.webhook}`,
      dn: null,
      principals: [],
      access: [],
    };
    return {
      start: (
        name: string,
        parameters: unknown,
        options: { readonly key?: string; readonly version?: number } = {},
      ) =>
        startWorkflow(deps, {
          name,
          ...(options.version === undefined ? {} : { version: options.version }),
          parameters,
          as,
          trusted: true,
          startKey: `${ref.source}/${ref.eventId}/${options.key ?? name}`,
          cause: {
            causationId: ref.receivedEventId,
            correlationId: `${ref.source}/${ref.eventId}`,
          },
        }),
      answer: (key: string, answer: unknown) =>
        answerRequest(deps, { key, answer, source: `${ref.source}/${ref.eventId}` }),
    };
  };
}
