import { randomUUID } from "node:crypto";
import type { Queryable } from "../../db/index.ts";
import { annalEvent, delegationStream, type ActorRef } from "../../events/index.ts";
import { readStream } from "../../store/index.ts";
import { actorRef, isOperator, type Actor } from "../access.ts";
import type { CommitDeps } from "../commit.ts";
import { WorkflowRefusal } from "../errors.ts";
import { databaseClock } from "../lock.ts";
import { delegationState, readDelegations, type Delegation } from "./read.ts";

/**
 * `as` delegates their dialogs to the person `to` (an account id, name or `origin:name`) from
 * `from` (default now, by the database's clock) until `until`. Refused with `WF_VALIDATION`
 * for an empty or past period or a delegation to oneself, `WF_NOT_FOUND` for no such person.
 *
 * @example
 * const { id } = await grantDelegation(deps, { as: prossi, to: "owojcik", until: new Date("2026-12-24T00:00:00Z") });
 */
export async function grantDelegation(
  deps: Pick<CommitDeps, "pool" | "store">,
  options: { readonly as: Actor; readonly to: string; readonly from?: Date; readonly until: Date },
): Promise<Delegation> {
  const now = await databaseClock(deps.pool);
  const from = options.from ?? now;
  if (options.until.getTime() <= from.getTime()) {
    throw new WorkflowRefusal(
      "WF_VALIDATION",
      `a delegation ends after it starts: until ${options.until.toISOString()} is not after ${from.toISOString()}`,
    );
  }
  if (options.until.getTime() <= now.getTime()) {
    throw new WorkflowRefusal(
      "WF_VALIDATION",
      `until ${options.until.toISOString()} has passed: a delegation is for a period to come`,
    );
  }
  const candidates = await peopleNamed(deps.pool, options.to);
  const delegate = candidates[0];
  if (!delegate || candidates.length > 1) {
    throw new WorkflowRefusal(
      "WF_NOT_FOUND",
      candidates.length > 1
        ? `"${options.to}" names ${candidates.length} people: name one by its account id or origin:name`
        : `no person "${options.to}" to delegate to`,
    );
  }
  if (delegate.accountId === options.as.accountId) {
    throw new WorkflowRefusal(
      "WF_VALIDATION",
      "a person cannot delegate their dialogs to themselves",
    );
  }
  const delegation: Delegation = {
    id: randomUUID(),
    delegator: actorRef(options.as),
    delegate,
    from,
    until: options.until,
    grantedAt: now,
    ended: null,
  };
  await appendToDelegator(deps, options.as.accountId, [
    annalEvent("DelegationGranted", {
      delegationId: delegation.id,
      delegator: delegation.delegator,
      delegate: delegation.delegate,
      from: from.toISOString(),
      until: options.until.toISOString(),
    }),
  ]);
  return delegation;
}

/**
 * Ends a delegation before its `until` (its delegator, or an operator): from now on the
 * delegate no longer answers for the delegator. `WF_CONFLICT` once it is over.
 */
export async function endDelegation(
  deps: Pick<CommitDeps, "pool" | "store">,
  options: { readonly as: Actor; readonly id: string },
): Promise<Delegation> {
  const delegation = (await readDelegations(deps.pool)).find((d) => d.id === options.id);
  const mine =
    delegation &&
    (delegation.delegator.accountId === options.as.accountId ||
      delegation.delegate.accountId === options.as.accountId);
  if (!delegation || (!mine && !isOperator(options.as))) {
    throw new WorkflowRefusal("WF_NOT_FOUND", `no delegation ${options.id}`);
  }
  if (delegation.delegator.accountId !== options.as.accountId && !isOperator(options.as)) {
    throw new WorkflowRefusal(
      "WF_FORBIDDEN",
      "ending a delegation takes the person who gave it or the operator access function",
    );
  }
  const now = await databaseClock(deps.pool);
  const state = delegationState(delegation, now);
  if (state === "ended" || state === "expired") {
    throw new WorkflowRefusal("WF_CONFLICT", `delegation ${delegation.id} is ${state} already`);
  }
  await appendToDelegator(deps, delegation.delegator.accountId, [
    annalEvent("DelegationEnded", {
      delegationId: delegation.id,
      by: actorRef(options.as),
      endedAt: now.toISOString(),
    }),
  ]);
  return { ...delegation, ended: { by: actorRef(options.as), at: now } };
}

/** Appends to the delegator's stream at the version read: a concurrent grant is refused. */
async function appendToDelegator(
  deps: Pick<CommitDeps, "pool" | "store">,
  delegatorId: string,
  events: Parameters<CommitDeps["store"]["appendToStream"]>[1],
): Promise<void> {
  const stream = delegationStream(delegatorId);
  const version = (await readStream(deps.pool, stream)).length;
  await deps.store.appendToStream(stream, events, {
    expectedVersion: version === 0 ? "no_stream" : version,
  });
}

/**
 * The people `name` names now: by account id, by name, or by `origin:name` (from the accounts
 * table, which a sign-in writes before anything projects it).
 */
async function peopleNamed(db: Queryable, name: string): Promise<ActorRef[]> {
  const found = await db.query<{ id: string; name: string; dn: string | null }>(
    `SELECT p.id, p.name, p.dn FROM person_accounts AS p
      WHERE p.id::text = $1 OR p.name = $1 OR (p.origin || ':' || p.name) = $1 ORDER BY p.id`,
    [name],
  );
  return found.rows.map((row) => ({ accountId: row.id, name: row.name, dn: row.dn }));
}
