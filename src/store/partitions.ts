import type { Pool, Queryable } from "../db/index.ts";

/**
 * Makes the event table's partitions ahead of need (the SQL function
 * `annal_event_partitions_ensure`: `ahead` empty partitions of `width` positions beyond the
 * newest position, both in table `event_partitioning`); returns the first position no
 * partition holds yet. Idempotent, and serialised across processes by an advisory lock.
 * Run at start and by `EventPartitions` when an append has entered the last ready partition.
 */
export async function ensureEventPartitions(db: Queryable, through = 0): Promise<number> {
  const result = await db.query<{ ready: string }>(
    "SELECT annal_event_partitions_ensure($1::bigint)::text AS ready",
    [through],
  );
  return Number(result.rows[0]!.ready);
}

/**
 * An appender's view of the partitions ready for its events: after each append it compares
 * the last position drawn with the first one no partition holds, a comparison of two numbers,
 * and once the append has entered the last ready partition it makes the next ones, beside the
 * appends (`extending`), never inside an appender's transaction. With two partitions ahead
 * (the default), a whole partition's width of appends (10,000,000 events) lies between the
 * moment this starts and the moment an append could find no partition.
 */
export class EventPartitions {
  private readonly pool: Pool;
  private ready: number;
  private width: number;
  /** The extension under way, if any: one at a time per process. */
  extending: Promise<void> | undefined;

  private constructor(pool: Pool, ready: number, width: number) {
    this.pool = pool;
    this.ready = ready;
    this.width = width;
  }

  static async load(pool: Pool): Promise<EventPartitions> {
    const result = await pool.query<{ ready: string | null; width: string }>(
      `SELECT (SELECT max(p.upper_position) FROM event_partitions AS p)::text AS ready,
              s.width::text AS width
         FROM event_partitioning AS s`,
    );
    const row = result.rows[0]!;
    return new EventPartitions(pool, Number(row.ready ?? 0), Number(row.width));
  }

  /** Notes that an append drew positions up to `position`, and extends when it is time. */
  appended(position: number): void {
    if (position < this.ready - this.width || this.extending) return;
    this.extending = this.extend().finally(() => {
      this.extending = undefined;
    });
  }

  private async extend(): Promise<void> {
    try {
      this.ready = await ensureEventPartitions(this.pool);
      const width = await this.pool.query<{ width: string }>(
        "SELECT width::text AS width FROM event_partitioning",
      );
      this.width = Number(width.rows[0]?.width ?? this.width);
    } catch {
      // The next append past the mark tries again; start-up and the remaining partition's
      // width leave time for that.
    }
  }
}
