import type { ActorRef } from "../events/index.ts";
import type { WorkflowDefinition } from "./define.ts";
import {
  canonicalPrincipal as canonical,
  type InstanceState,
} from "../../projections/workflows/index.ts";

/**
 * Who acts on the engine: an account, its principals (group DNs, `account:<id>`) and its access
 * functions, as annal's authentication found them.
 */
export interface Actor {
  readonly accountId: string;
  readonly name: string;
  /** The DN its directory writes are made as, when it has one. */
  readonly dn: string | null;
  readonly principals: readonly string[];
  readonly access: readonly string[];
}

/** The access functions that see every instance; `operator` also acts on them. */
export const OPERATOR = "operator";
const SEES_ALL = new Set([OPERATOR, "auditor"]);

export function actorRef(actor: Actor): ActorRef {
  return { accountId: actor.accountId, name: actor.name, dn: actor.dn };
}

/** A definition is in an account's catalog when it needs no access to start, or one it has. */
export function maySeeDefinition(actor: Actor, definition: WorkflowDefinition): boolean {
  const needed = definition.access.start;
  return needed.length === 0 || needed.some((fn) => actor.access.includes(fn));
}

/** Whether `actor` is one of `assignees` (an account id, `account:<id>`, or a principal). */
export function isAssignee(actor: Actor, assignees: readonly string[]): boolean {
  const mine = new Set([
    actor.accountId,
    `account:${actor.accountId}`,
    ...actor.principals.map(canonical),
    ...(actor.dn ? [canonical(actor.dn)] : []),
  ]);
  return assignees.some((assignee) => mine.has(assignee) || mine.has(canonical(assignee)));
}

/**
 * An instance is visible to the account that started it, to the assignees of its dialogs, and
 * to operators and auditors. Anyone else is told it does not exist (`WF_NOT_FOUND`).
 */
export function maySeeInstance(actor: Actor, state: InstanceState): boolean {
  if (seesAll(actor)) return true;
  if (state.startedBy.accountId === actor.accountId) return true;
  for (const call of state.calls.values()) {
    if (call.kind === "dialog" && isAssignee(actor, call.assignees)) return true;
  }
  return false;
}

/** Operators and auditors see every instance. */
export function seesAll(actor: Actor): boolean {
  return actor.access.some((fn) => SEES_ALL.has(fn));
}

export function isOperator(actor: Actor): boolean {
  return actor.access.includes(OPERATOR);
}
