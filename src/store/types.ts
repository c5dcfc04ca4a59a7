/** Who and what caused an event; every key is optional. */
export interface EventMetadata {
  /** The account, directory identity or source system that made the change. */
  readonly actor?: string | null;
  /** Groups the events of one request or one workflow run. */
  readonly correlationId?: string | null;
  /** The id of the event (or request) that caused this one: "why did this change". */
  readonly causationId?: string | null;
  /** Where the event came from: `accesslog`, `poll`, `webhook:<hook>/<webhook>`, `graphql`, ... */
  readonly source?: string | null;
  readonly [key: string]: unknown;
}

/** An event as a caller hands it to `appendToStream`. */
export interface NewEvent<Data = unknown> {
  /** Defaults to a new UUIDv7 (`newEventId`). */
  readonly id?: string;
  readonly type: string;
  readonly data: Data;
  readonly metadata?: EventMetadata;
  /** When the change happened at its source; defaults to the time of the append. */
  readonly occurredAt?: Date;
  /**
   * The source's own identity of this change (webhook `source`+`eventId`, the directory's
   * change id). Appending an event whose key is already stored appends nothing and returns
   * the stored event.
   */
  readonly idempotencyKey?: string;
}

/** Where an event stands in the global order: (transaction id, position). */
export interface LogPosition {
  /** The appending transaction's id (xid8, as a decimal string). */
  readonly transactionId: string;
  readonly position: number;
}

export interface RecordedEvent<Data = unknown> extends LogPosition {
  readonly id: string;
  readonly streamId: string;
  readonly streamVersion: number;
  readonly type: string;
  readonly data: Data;
  readonly metadata: EventMetadata;
  readonly occurredAt: Date;
  readonly recordedAt: Date;
  readonly idempotencyKey: string | null;
}

/**
 * What the appender believes about the stream: its exact current version (0 for a stream
 * with no events), `"no_stream"`, `"exists"` or `"any"` (no check).
 */
export type ExpectedVersion = number | "no_stream" | "exists" | "any";

export const START: LogPosition = { transactionId: "0", position: 0 };
