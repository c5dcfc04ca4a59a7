import { withTransaction, type Pool, type Queryable } from "../db/index.ts";
import { eventsAppended } from "../metrics.ts";
import { pausePointArmed } from "../pause-points.ts";
import { appendInOneStatement, appendInTransaction, type AppendResult } from "./append.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { loadEpoch } from "./epoch.ts";
import { EventPartitions } from "./partitions.ts";
import { readAll, readHead, readStream } from "./read.ts";
import {
  START,
  type ExpectedVersion,
  type LogPosition,
  type NewEvent,
  type RecordedEvent,
} from "./types.ts";

export interface AppendOptions {
  /** Default `"any"`: no check. */
  readonly expectedVersion?: ExpectedVersion;
  /** Append inside this transaction (the caller commits); default: a transaction of its own. */
  readonly tx?: Queryable;
  /**
   * With `tx`: the caller already serialises every writer of these events' idempotency keys,
   * by a lock it took in an earlier statement of `tx`, so the append can be one statement (one
   * round trip instead of three). Without that lock the one statement could miss a key that a
   * concurrent append committed while it waited for the stream's row (its snapshot is older
   * than that wait) and fail on the unique index; the default path looks the keys up after
   * the stream is locked.
   */
  readonly keysSerialised?: boolean;
}

export interface ReadAllPage {
  readonly events: readonly RecordedEvent[];
  /** Where to continue: after the last event returned, or where the read started. */
  readonly cursor: string;
  readonly position: LogPosition;
}

/**
 * The event log. Every directory change, workflow step and snapshot is appended here; every
 * projection is built by reading it in global order.
 *
 * @example
 * const store = await EventStore.open(pool);
 * const { version } = await store.appendToStream("entry-42", [
 *   { type: "EntryModified", data: { ... }, idempotencyKey: "accesslog:20261122..." },
 * ], { expectedVersion: 3 });
 * const page = await store.readAll({ after: cursorFromLastTime, limit: 500 });
 */
export class EventStore {
  readonly pool: Pool;
  /** This database's identity, carried in every cursor. */
  readonly epoch: string;
  /** The partitions ready for this store's appends, made ahead of need (`EventPartitions`). */
  readonly partitions: EventPartitions;

  private constructor(pool: Pool, epoch: string, partitions: EventPartitions) {
    this.pool = pool;
    this.epoch = epoch;
    this.partitions = partitions;
  }

  static async open(pool: Pool): Promise<EventStore> {
    const [epoch, partitions] = await Promise.all([loadEpoch(pool), EventPartitions.load(pool)]);
    return new EventStore(pool, epoch, partitions);
  }

  async appendToStream(
    streamId: string,
    events: readonly NewEvent[],
    options: AppendOptions = {},
  ): Promise<AppendResult> {
    const expected = options.expectedVersion ?? "any";
    let result: AppendResult;
    if (options.tx) {
      // The one statement writes nothing when it cannot decide (an expected version that does
      // not hold): the transaction path then decides, and throws what it must.
      result =
        (options.keysSerialised && events.length > 0
          ? await appendInOneStatement(options.tx, streamId, events, expected)
          : undefined) ?? (await appendInTransaction(options.tx, streamId, events, expected));
    } else {
      result = await this.appendOwnTransaction(streamId, events, expected);
    }
    eventsAppended.inc(result.appended);
    const last = result.events.at(-1);
    if (last) this.partitions.appended(last.position);
    return result;
  }

  private async appendOwnTransaction(
    streamId: string,
    events: readonly NewEvent[],
    expected: ExpectedVersion,
  ): Promise<AppendResult> {
    const inTransaction = () =>
      withTransaction(this.pool, (tx) => appendInTransaction(tx, streamId, events, expected));
    // One statement, one round trip. The transaction path decides what it cannot (see
    // appendInOneStatement), and stands at the store's pause point when a test armed it.
    const oneStatement = async () =>
      events.length > 0 && !pausePointArmed("store.append.afterInsert", streamId)
        ? await appendInOneStatement(this.pool, streamId, events, expected)
        : undefined;
    try {
      return (await oneStatement()) ?? (await inTransaction());
    } catch (error) {
      // Two appends of the same idempotency key can race past the lookup; the unique index
      // stops the second. Once the first has committed, the transaction path finds its key
      // and returns the stored event.
      if (isIdempotencyKeyViolation(error)) return inTransaction();
      throw error;
    }
  }

  readStream(streamId: string, options?: { fromVersion?: number; limit?: number }) {
    return readStream(this.pool, streamId, options);
  }

  /** A page of the log in safe global order, after `after` (a cursor or a position). */
  async readAll(
    options: { after?: string | LogPosition; limit?: number } = {},
  ): Promise<ReadAllPage> {
    const after = this.positionOf(options.after);
    const events = await readAll(this.pool, after, options.limit ?? 1000);
    const last = events.at(-1);
    const position = last ? { transactionId: last.transactionId, position: last.position } : after;
    return { events, position, cursor: this.cursorOf(position) };
  }

  head(): Promise<LogPosition> {
    return readHead(this.pool);
  }

  cursorOf(position: LogPosition): string {
    return encodeCursor(this.epoch, position);
  }

  positionOf(cursor: string | LogPosition | undefined): LogPosition {
    if (cursor === undefined || cursor === "") return START;
    return typeof cursor === "string" ? decodeCursor(this.epoch, cursor) : cursor;
  }
}

function isIdempotencyKeyViolation(error: unknown): boolean {
  const e = error as { code?: string; constraint?: string };
  return e.code === "23505" && e.constraint === "event_idempotency_keys_pkey";
}
