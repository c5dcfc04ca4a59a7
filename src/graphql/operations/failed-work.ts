import { assertAccess } from "../../auth/index.ts";
import { FAILED_WORK_STATES, listFailedWork, type FailedWorkState } from "../../hooks/index.ts";
import { firstOf } from "../connection.ts";
import type { GatewayContext } from "../context.ts";
import { BadUserInputError } from "../errors.ts";
import { engineOf } from "./engine.ts";
import { iso } from "./nodes.ts";

/** `Query.failedWork`, for operators. */
export async function failedWork(context: GatewayContext, args: Record<string, unknown>) {
  assertAccess(context.viewer, "operator");
  const states = args.state as string[] | null | undefined;
  for (const state of states ?? []) {
    if (!(FAILED_WORK_STATES as readonly string[]).includes(state)) {
      throw new BadUserInputError("Invalid state filter", {
        argument: "state",
        hint: `one of ${FAILED_WORK_STATES.join(", ")}`,
      });
    }
  }
  const items = await listFailedWork(engineOf(context).pool, {
    ...(states ? { states: states as FailedWorkState[] } : {}),
    limit: firstOf(args.first),
  });
  return items.map((item) => ({
    id: item.id,
    hook: item.hook,
    webhook: item.webhook,
    source: item.source,
    eventId: item.eventId,
    type: item.type,
    subject: item.subject,
    state: item.state,
    attempts: item.attempts,
    errorCode: item.lastError.code,
    errorMessage: item.lastError.message,
    failedAt: iso(item.failedAt),
    retries: item.retries,
  }));
}
