/**
 * The events of a change event's life, all on its source's stream (`source-<source>`). Each
 * after the first carries the first's id as `metadata.causationId`.
 */
export const CHANGE_EVENT = {
  /** The webhook accepted it (idempotency key `change-event:<source>:<eventId>`). */
  received: "ChangeEventReceived",
  /** The provider processed it. */
  processed: "ChangeEventProcessed",
  /** An attempt failed; `willRetry` says whether another follows on its own. */
  failed: "ChangeEventFailed",
  /** No attempt is left (a permanent failure, or the retries are used up): failed work. */
  abandoned: "ChangeEventAbandoned",
  /** Someone asked for failed work to be processed again. */
  retryRequested: "ChangeEventRetryRequested",
} as const;

/** Which hook's webhook took the change event in, and its identity. */
export interface ChangeEventRef {
  readonly hook: string;
  readonly webhook: string;
  readonly source: string;
  readonly eventId: string;
  /** The id of the `ChangeEventReceived` event. */
  readonly receivedEventId: string;
}

export interface ChangeEventReceived {
  readonly hook: string;
  readonly webhook: string;
  readonly envelope: ChangeEventEnvelope;
  /** SHA-256 of the envelope's canonical JSON: a resend must match it. */
  readonly contentHash: string;
}

export interface ProcessingError {
  /** The error's code when it has one (a `PermanentFailure`'s, an `AnnalError`'s). */
  readonly code: string | null;
  readonly message: string;
}

export interface ChangeEventProcessed extends ChangeEventRef {
  readonly attempt: number;
  /** What the provider resolved with, when it is JSON. */
  readonly result: unknown;
  readonly directoryWrites: readonly DirectoryWrite[];
}

export interface ChangeEventFailed extends ChangeEventRef {
  readonly attempt: number;
  readonly error: ProcessingError;
  readonly permanent: boolean;
  readonly willRetry: boolean;
  readonly directoryWrites: readonly DirectoryWrite[];
}

export interface ChangeEventAbandoned extends ChangeEventRef {
  readonly subject: string;
  readonly type: string;
  /** Attempts made in all, across retries from failed work. */
  readonly attempts: number;
  /**
   * `attempt_lost`: the last attempt ended without an outcome (its worker died, or could not
   * record one), and pg-boss's dead-letter queue brought it back.
   */
  readonly reason: "permanent_failure" | "retries_exhausted" | "attempt_lost";
  readonly error: ProcessingError;
}

export interface ChangeEventRetryRequested extends ChangeEventRef {
  /** Attempts made before this retry. */
  readonly attempts: number;
  /** Who asked (the CLI's user, the web application's account), when known. */
  readonly requestedBy: string | null;
}

/** A change event as stored and as the provider receives it. */
export interface ChangeEventEnvelope {
  readonly source: string;
  readonly eventId: string;
  readonly type: string;
  readonly subject: string;
  /** ISO 8601, UTC, milliseconds: `2026-11-22T08:30:00.000Z`. */
  readonly occurredAt: string;
  readonly data: unknown;
}

/** A write the provider made through `context.directory`, recorded with the outcome. */
export interface DirectoryWrite {
  readonly operation: "add" | "modify" | "modifyDN" | "delete";
  readonly dn: string;
  /** Attribute names written (never values: some are secrets). */
  readonly attributes?: readonly string[];
}
