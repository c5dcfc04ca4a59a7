import {
  databaseClock,
  delegationState,
  endDelegation,
  grantDelegation,
  readDelegations,
  WorkflowRefusal,
  type ActorRef,
  type Delegation,
} from "../../workflow/index.ts";
import type { GatewayContext } from "../context.ts";
import { BadUserInputError } from "../errors.ts";
import { momentArgument } from "../moments.ts";
import { UUID } from "../../history/index.ts";
import { actorOf, commandActor, engineOf } from "./engine.ts";

/** `Query.myDelegations`: what the viewer gave and received, the latest granted first. */
export async function myDelegations(context: GatewayContext) {
  const engine = engineOf(context);
  const actor = actorOf(context.viewer);
  const now = await databaseClock(engine.pool);
  const mine = (await readDelegations(engine.pool, { account: actor.accountId })).sort(
    (a, b) => b.grantedAt.getTime() - a.grantedAt.getTime(),
  );
  return {
    given: mine
      .filter((d) => d.delegator.accountId === actor.accountId)
      .map((d) => delegationNode(d, now)),
    received: mine
      .filter((d) => d.delegate.accountId === actor.accountId)
      .map((d) => delegationNode(d, now)),
  };
}

/** `Mutation.delegateDialogs`: a person delegates their dialogs for a period. */
export async function delegateDialogs(context: GatewayContext, args: Record<string, unknown>) {
  const actor = commandActor(context.viewer);
  if (context.viewer.account.kind !== "person") {
    throw new WorkflowRefusal("WF_FORBIDDEN", "only a person delegates their dialogs");
  }
  const to = args.to;
  if (typeof to !== "string" || to.length === 0 || to.length > 300) {
    throw new BadUserInputError("Invalid to", {
      argument: "to",
      hint: "a person's account id, name or origin:name",
    });
  }
  const clock = context.clock();
  const from = momentArgument(args.from, clock, { argument: "from", message: "Invalid from" });
  const until = momentArgument(args.until, clock, { argument: "until", message: "Invalid until" });
  if (until === undefined) throw new BadUserInputError("Invalid until", { argument: "until" });
  const delegation = await grantDelegation(engineOf(context), {
    as: actor,
    to,
    until,
    ...(from === undefined ? {} : { from }),
  });
  return delegationNode(delegation, delegation.grantedAt);
}

/** `Mutation.endDelegation`: ends one now. */
export async function endOne(context: GatewayContext, args: Record<string, unknown>) {
  const id = args.id;
  if (typeof id !== "string" || !UUID.test(id)) {
    throw new BadUserInputError("Invalid id", {
      argument: "id",
      hint: "a delegation id is a UUID, as delegateDialogs and myDelegations return it",
    });
  }
  const ended = await endDelegation(engineOf(context), {
    as: commandActor(context.viewer),
    id: id.toLowerCase(),
  });
  return delegationNode(ended, ended.ended!.at);
}

function delegationNode(delegation: Delegation, now: Date) {
  return {
    id: delegation.id,
    delegator: actorView(delegation.delegator),
    delegate: actorView(delegation.delegate),
    from: delegation.from.toISOString(),
    until: delegation.until.toISOString(),
    grantedAt: delegation.grantedAt.toISOString(),
    state: delegationState(delegation, now),
    endedAt: delegation.ended?.at.toISOString() ?? null,
    endedBy: actorView(delegation.ended?.by),
  };
}

function actorView(actor: ActorRef | undefined) {
  return actor ? { id: actor.accountId, name: actor.name, dn: actor.dn } : null;
}
