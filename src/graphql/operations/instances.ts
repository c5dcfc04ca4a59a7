import { UUID } from "../../history/index.ts";
import {
  cancelInstance,
  retryInstance,
  WorkflowRefusal,
  type InstanceStatus,
} from "../../workflow/index.ts";
import { decodeKeyCursor, encodeKeyCursor, firstOf } from "../connection.ts";
import type { GatewayContext } from "../context.ts";
import { BadUserInputError } from "../errors.ts";
import { momentArgument } from "../moments.ts";
import { DEFINITION_NAME, instanceIdArg, optional, textFilter } from "./arguments.ts";
import { actorOf, commandActor, engineOf, readerOf } from "./engine.ts";
import { instanceNode } from "./nodes.ts";

const INSTANCE_STATES = new Set<InstanceStatus>([
  "RUNNING",
  "WAITING",
  "COMPLETED",
  "ERRORED",
  "CANCELLED",
]);

/** `Query.instances`: a page of the instances the viewer may see, by its filters. */
export async function instances(context: GatewayContext, args: Record<string, unknown>) {
  const reader = readerOf(context);
  const actor = actorOf(context.viewer);
  const first = firstOf(args.first);
  const filter = {
    ...(args.state ? { status: args.state as InstanceStatus } : {}),
    ...optional("definition", textFilter(args.definition, "definition", DEFINITION_NAME)),
    ...optional("startedBy", textFilter(args.startedBy, "startedBy", /^.{1,200}$/s)),
    ...optional(
      "since",
      momentArgument(args.since, context.clock(), {
        argument: "since",
        message: "Invalid since filter",
      }),
    ),
  };
  if (filter.status !== undefined && !INSTANCE_STATES.has(filter.status)) {
    throw new BadUserInputError("Invalid state filter", { argument: "state" });
  }
  // The cursor belongs to the list its filters make: another list's is refused.
  const scope = `instances:${actor.accountId}:${JSON.stringify(filter)}`;
  const after =
    args.after === undefined || args.after === null
      ? undefined
      : decodeKeyCursor(args.after, scope, UUID);
  const page = await reader.instances(filter, { first, ...(after ? { after } : {}) });
  const head = page.instances[0];
  const last = page.instances.at(-1);
  return {
    nodes: page.instances.map((view) => instanceNode(view, page.moment)),
    pageInfo: {
      hasNextPage: page.more,
      hasPreviousPage: after !== undefined,
      startCursor: head ? encodeKeyCursor(head.id, scope) : null,
      endCursor: last ? encodeKeyCursor(last.id, scope) : null,
    },
  };
}

/** `Query.instance`: one instance, now or `at` a moment; WF_NOT_FOUND when the viewer sees none. */
export async function instance(context: GatewayContext, args: Record<string, unknown>) {
  const id = instanceIdArg(args.id);
  const at = momentArgument(args.at, context.clock(), { argument: "at", message: "Invalid at" });
  const reader = readerOf(context);
  const moment = await reader.moment(at);
  const view = await reader.instance(id, moment);
  if (!view) {
    throw new WorkflowRefusal(
      "WF_NOT_FOUND",
      at ? `no instance ${id} at ${at.toISOString()}` : `no instance ${id}`,
    );
  }
  return instanceNode(view, moment);
}

/** `Mutation.cancelInstance`: answers with the instance read back from its log. */
export async function cancel(context: GatewayContext, args: Record<string, unknown>) {
  const instanceId = instanceIdArg(args.id);
  const reason = args.reason;
  if (
    reason !== undefined &&
    reason !== null &&
    (typeof reason !== "string" || reason.length > 500)
  ) {
    throw new BadUserInputError("Invalid reason", { argument: "reason" });
  }
  await cancelInstance(engineOf(context), {
    instanceId,
    as: commandActor(context.viewer),
    ...(typeof reason === "string" ? { reason } : {}),
  });
  return afterCommand(context, instanceId);
}

/** `Mutation.retryInstance`: answers with the instance read back from its log. */
export async function retry(context: GatewayContext, args: Record<string, unknown>) {
  const instanceId = instanceIdArg(args.id);
  await retryInstance(engineOf(context), { instanceId, as: commandActor(context.viewer) });
  return afterCommand(context, instanceId);
}

/** A command's answer: the instance as it is now, read back from its log (not the projection). */
export async function afterCommand(context: GatewayContext, instanceId: string) {
  const { instance, moment } = await readerOf(context).afterCommand(instanceId);
  return instanceNode(instance, moment);
}
