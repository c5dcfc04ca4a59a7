import type { Queryable } from "../db/index.ts";
import { projectorBatchReads } from "../metrics.ts";
import { readAll, type LogPosition, type RecordedEvent } from "../store/index.ts";

/** How a projection reads its next batch of the log: `readAll`, or a `SharedLogReads`. */
export type ReadBatch = (
  db: Queryable,
  after: LogPosition,
  limit: number,
) => Promise<readonly RecordedEvent[]>;

/**
 * The log's batches read once for every projection at the same checkpoint. While the
 * projections catch up together (after a first-start import, say), each would otherwise read
 * and parse the same events: nine projections, nine copies of every batch in memory and nine
 * times the garbage.
 *
 * Only a full batch is kept for the others: the first `limit` events after a position, all
 * below the safe bound when read, are the same events whenever they are read (nothing can
 * come before them in log order any more). A shorter batch is the log's tail, which a later
 * read may find longer, so each projection reads the tail for itself.
 *
 * The events are shared, so a projection must not change them (`RecordedEvent` is readonly).
 */
export class SharedLogReads {
  private readonly batches = new Map<string, Promise<readonly RecordedEvent[]>>();
  private readonly keep: number;
  private readonly readLog: ReadBatch;

  constructor(options: { keep: number; read?: ReadBatch }) {
    this.keep = options.keep;
    this.readLog = options.read ?? readAll;
  }

  readonly read: ReadBatch = (db, after, limit) => {
    const key = `${after.transactionId}/${after.position}/${limit}`;
    const earlier = this.batches.get(key);
    if (earlier) {
      projectorBatchReads.inc({ source: "shared" });
      return earlier.then(
        // A read still under way when this one asked may end short: the tail as it was when
        // that read began, maybe before the append this reader was woken for, after which no
        // notification comes (it would wait for its poll interval). The tail is each
        // reader's own.
        (events) => (events.length < limit ? this.readLog(db, after, limit) : events),
        // The reader's transaction failing is no reason for this one to.
        () => this.readLog(db, after, limit),
      );
    }
    projectorBatchReads.inc({ source: "database" });
    const reading = this.readLog(db, after, limit);
    this.batches.set(key, reading);
    reading.then(
      (events) => {
        if (events.length < limit) this.forget(key, reading);
      },
      () => this.forget(key, reading),
    );
    // A Map iterates in insertion order: the oldest batches go first.
    for (const old of this.batches.keys()) {
      if (this.batches.size <= this.keep) break;
      this.batches.delete(old);
    }
    return reading;
  };

  private forget(key: string, reading: Promise<readonly RecordedEvent[]>): void {
    if (this.batches.get(key) === reading) this.batches.delete(key);
  }
}
