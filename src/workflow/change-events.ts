import type { ChangeEventRef } from "../events/index.ts";
import type { Actor } from "./access.ts";
import { loadInstance, type EngineDeps } from "./advance.ts";
import { answerRequest, startWorkflow } from "./commands.ts";
import { WorkflowRefusal } from "./errors.ts";

/**
 * Which pending request a change event answers: its key (what the request's binding was sent
 * with), or the instance and the request's binding, for a source that knows the instance but
 * was never sent the key (HR's rehire of a leaver, found by the employee's uid).
 */
export type RequestTarget = string | { readonly instanceId: string; readonly request: string };

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
      answer: async (target: RequestTarget, answer: unknown) =>
        answerRequest(deps, {
          key: typeof target === "string" ? target : await requestKey(deps, target),
          answer,
          source: `${ref.source}/${ref.eventId}`,
        }),
    };
  };
}

/**
 * The key of the instance's latest request through `request`: the pending one, or, once it is
 * answered, the one a retried change event answers again (which `answerRequest` takes as the
 * same answer, or refuses as WF_CONFLICT for another). `WF_NOT_FOUND` before the instance has
 * sent one, as for a key no request has.
 */
async function requestKey(
  deps: EngineDeps,
  target: { readonly instanceId: string; readonly request: string },
): Promise<string> {
  const state = await loadInstance(deps.pool, target.instanceId);
  const calls = state ? [...state.calls.values()] : [];
  const latest = calls.findLast((call) => call.kind === "request" && call.name === target.request);
  if (latest?.kind !== "request") {
    throw new WorkflowRefusal(
      "WF_NOT_FOUND",
      `instance ${target.instanceId} has sent no request through "${target.request}"`,
    );
  }
  return latest.key;
}
