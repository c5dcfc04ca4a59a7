import { completeDialog } from "../../workflow/index.ts";
import { decodeKeyCursor, encodeKeyCursor, firstOf } from "../connection.ts";
import type { GatewayContext } from "../context.ts";
import { BadUserInputError } from "../errors.ts";
import { DIALOG_ID } from "./arguments.ts";
import { actorOf, commandActor, engineOf, readerOf } from "./engine.ts";
import { dialogNode } from "./nodes.ts";

/** `Query.myDialogs`: the viewer's inbox, the oldest pending dialog first. */
export async function myDialogs(context: GatewayContext, args: Record<string, unknown>) {
  const reader = readerOf(context);
  const actor = actorOf(context.viewer);
  const first = firstOf(args.first);
  const scope = `dialogs:${actor.accountId}`;
  const after =
    args.after === undefined || args.after === null
      ? undefined
      : decodeKeyCursor(args.after, scope, DIALOG_ID);
  const except = Array.isArray(args.exceptWorkflows)
    ? args.exceptWorkflows.filter((name): name is string => typeof name === "string")
    : [];
  const dialogs = await reader.inbox(first + 1, after, except);
  const page = dialogs.slice(0, first);
  return {
    nodes: page.map((dialog) => dialogNode(dialog)),
    pageInfo: {
      hasNextPage: dialogs.length > first,
      hasPreviousPage: after !== undefined,
      startCursor: page[0] ? encodeKeyCursor(page[0].id, scope) : null,
      endCursor: page.at(-1) ? encodeKeyCursor(page.at(-1)!.id, scope) : null,
    },
  };
}

/** `Mutation.completeDialog`: answers with the dialog (and its instance) read back from the log. */
export async function answer(context: GatewayContext, args: Record<string, unknown>) {
  const engine = engineOf(context);
  const actor = commandActor(context.viewer);
  const id = args.id;
  if (typeof id !== "string" || !DIALOG_ID.test(id)) {
    throw new BadUserInputError("Invalid id", {
      argument: "id",
      hint: "a dialog id is `<instance id>.<seq>`, as myDialogs returns it",
    });
  }
  const { instanceId } = await completeDialog(engine, {
    dialogId: id,
    answer: args.answer,
    as: actor,
  });
  const { dialog, instance, moment } = await readerOf(context).dialogAfterCommand(instanceId, id);
  return dialogNode(dialog, { instance, moment });
}
