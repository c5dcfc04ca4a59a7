import type { GraphQLFieldResolver } from "graphql";
import { assertAuthority, principalLimitError } from "../../auth/index.ts";
import { AnnalError } from "../../errors/index.ts";
import { WorkflowReader, type Actor, type EngineDeps } from "../../workflow/index.ts";
import type { GatewayContext, Viewer } from "../context.ts";

/** A resolver of a workflow operation: the root's fields take no parent. */
export type Resolver = GraphQLFieldResolver<unknown, GatewayContext, Record<string, unknown>>;

/** The engine's refusals when annal runs without one (a gateway built for tests of its own). */
class WorkflowsUnavailableError extends AnnalError {
  constructor() {
    super("ANNAL_WORKFLOWS_UNAVAILABLE", "this annal runs no workflow engine", { status: 503 });
  }
}

export function engineOf(context: GatewayContext): EngineDeps {
  if (!context.workflows) throw new WorkflowsUnavailableError();
  return context.workflows.engine;
}

/**
 * The viewer as the engine knows an actor. An account over its principal limit may neither
 * read nor command (the spec's AUTHORIZATION_PRINCIPAL_LIMIT_EXCEEDED).
 */
export function actorOf(viewer: Viewer): Actor {
  if (viewer.principalLimit) throw principalLimitError(viewer.principalLimit);
  return {
    accountId: viewer.account.id,
    name: viewer.account.name,
    dn: viewer.actorDN,
    principals: viewer.principals,
    access: viewer.access,
  };
}

/** A command's actor: its authority must be confirmed by its identity provider. */
export function commandActor(viewer: Viewer): Actor {
  const actor = actorOf(viewer);
  assertAuthority(viewer);
  return actor;
}

/** What the viewer may read of the workflows, through the workflow module's read API. */
export function readerOf(context: GatewayContext): WorkflowReader {
  return new WorkflowReader(engineOf(context).pool, actorOf(context.viewer));
}
