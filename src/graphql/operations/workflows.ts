import { startWorkflow } from "../../workflow/index.ts";
import type { GatewayContext } from "../context.ts";
import { BadUserInputError } from "../errors.ts";
import { commandActor, engineOf, readerOf } from "./engine.ts";
import { afterCommand } from "./instances.ts";

/** `Query.workflows`: the deployed workflows the viewer may see. */
export async function catalog(context: GatewayContext) {
  return readerOf(context).catalog(engineOf(context).definitions);
}

/** `Mutation.startWorkflow`: answers with the new instance, read back from its log. */
export async function start(context: GatewayContext, args: Record<string, unknown>) {
  const engine = engineOf(context);
  const actor = commandActor(context.viewer);
  const startKey = args.startKey;
  if (startKey !== undefined && startKey !== null) {
    if (typeof startKey !== "string" || !/^.{1,200}$/s.test(startKey)) {
      throw new BadUserInputError("Invalid startKey", { argument: "startKey" });
    }
  }
  const { instanceId } = await startWorkflow(engine, {
    name: args.name as string,
    ...(typeof args.version === "number" ? { version: args.version } : {}),
    parameters: args.parameters,
    as: actor,
    // One account's key: another account's same key starts its own instance.
    ...(typeof startKey === "string" ? { startKey: `${actor.accountId}:${startKey}` } : {}),
  });
  return afterCommand(context, instanceId);
}
