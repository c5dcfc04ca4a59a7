/**
 * HR's own record of the workflows it started for each employee, kept in annal's event log: a
 * stream per employee, `hr-employee-<uid>`. It answers the one question HR's change events
 * cannot: which leaver is still waiting for this uid? HR knows people by uid; the leaver's
 * request is answered by its instance (context.workflows.answer({ instanceId, request })).
 *
 * Not a hooks file: names starting with `_` are helpers beside the hooks.
 *
 * Change events of one subject (here the uid) are processed one at a time, in order, so two
 * of them never read and write one employee's stream at once.
 */
import type { ProviderContext } from "annal";

/** What HR started for an employee, the latest last. */
export type EmployeeWorkflowEvent =
  | { readonly type: "LeaverStarted"; readonly uid: string; readonly instanceId: string }
  | { readonly type: "LeaverRehired"; readonly uid: string; readonly instanceId: string }
  | { readonly type: "JoinerStarted"; readonly uid: string; readonly instanceId: string };

const TYPES = new Set(["LeaverStarted", "LeaverRehired", "JoinerStarted"]);

const streamOf = (uid: string) => `hr-employee-${uid}`;

/** The latest workflow HR started (or rehired) for `uid`, if any. */
export async function latestFor(
  context: Pick<ProviderContext, "store">,
  uid: string,
): Promise<EmployeeWorkflowEvent | undefined> {
  const events = await context.store.readStream(streamOf(uid));
  const last = events.filter((event) => TYPES.has(event.type)).at(-1);
  if (!last) return undefined;
  const data = last.data as { uid: string; instanceId: string };
  return { type: last.type, uid: data.uid, instanceId: data.instanceId } as EmployeeWorkflowEvent;
}

/** Notes `event` for its employee, once per change event (a retried one notes nothing twice). */
export async function note(
  context: Pick<ProviderContext, "store" | "causationId" | "hook" | "webhook">,
  event: EmployeeWorkflowEvent,
): Promise<void> {
  const { type, ...data } = event;
  await context.store.appendToStream(streamOf(event.uid), [
    {
      type,
      data,
      metadata: {
        causationId: context.causationId,
        correlationId: context.causationId,
        source: `webhook:${context.hook}/${context.webhook}`,
      },
      idempotencyKey: `hr-employee:${context.causationId}:${type}`,
    },
  ]);
}
