import type { Queryable } from "../../db/index.ts";
import { workflowStream } from "../../events/index.ts";
import { readStream } from "../../store/index.ts";

/**
 * The key of the laptop ticket the joiner of `uid` is waiting on; undefined while it has not
 * asked (or its ticket was answered), null when no joiner was started for `uid`. The demo's HR hook notes each
 * joiner it starts on the employee's stream (`hr-employee-<uid>`, ops/demo/hooks/_employees.ts);
 * the joiner's request through its `tickets` binding is a `RequestSent` on its own stream,
 * pending until a `RequestAnswered` of the same call.
 */
export async function pendingTicketKey(
  db: Queryable,
  uid: string,
): Promise<string | null | undefined> {
  const employee = await readStream(db, `hr-employee-${uid}`);
  const joiner = employee.filter((event) => event.type === "JoinerStarted").at(-1);
  if (joiner === undefined) return null;
  const instanceId = (joiner.data as { instanceId: string }).instanceId;
  const events = await readStream(db, workflowStream(instanceId));
  const answered = new Set(
    events
      .filter((event) => event.type === "RequestAnswered")
      .map((event) => (event.data as { seq: number }).seq),
  );
  const sent = events
    .filter((event) => event.type === "RequestSent")
    .map((event) => event.data as { seq: number; name: string; key: string })
    .filter((request) => request.name === "tickets" && !answered.has(request.seq));
  return sent.at(-1)?.key;
}
