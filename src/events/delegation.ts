import type { ActorRef } from "./workflow.ts";

/**
 * A person's delegation of their dialogs: for a period, another account may answer the
 * dialogs assigned to them. Every delegation a person gives, and its early end, is on their
 * own stream, `delegation-<account id>`, so two grants by one person never race.
 */
export const delegationStream = (delegatorAccountId: string) => `delegation-${delegatorAccountId}`;

/** The event types of a delegation stream. */
export const DELEGATION_EVENT_TYPES = ["DelegationGranted", "DelegationEnded"] as const;

export interface DelegationGranted {
  readonly delegationId: string;
  /** Whose dialogs: the account that gave it. */
  readonly delegator: ActorRef;
  /** Who may answer them. */
  readonly delegate: ActorRef;
  /** The period, ISO 8601: from `from` (inclusive) to `until` (exclusive). */
  readonly from: string;
  readonly until: string;
}

/** A delegation ended before its `until`. */
export interface DelegationEnded {
  readonly delegationId: string;
  readonly by: ActorRef;
  /** From when it no longer holds, ISO 8601 (the database's clock when it was ended). */
  readonly endedAt: string;
}
