import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterCommit, type Pool, type Queryable } from "../db/index.ts";
import { pausePoint } from "../pause-points.ts";

/** The channel appends are announced on once committed; tailing readers LISTEN to it. */
export const EVENTS_CHANNEL = "annal_events";

/**
 * The one statement that announces appends: a transaction of its own that only notifies, its
 * payload the notifier's `token`. Its commit need not wait for the disk (`synchronous_commit`
 * off): it records nothing, and a notification lost in a crash leaves a reader to its poll, as
 * a crash before it would.
 */
const notifyStatement = (token: string) =>
  `BEGIN; SET LOCAL synchronous_commit = off; SELECT pg_notify('${EVENTS_CHANNEL}', '${token}'); COMMIT`;

/**
 * Announces committed appends on `EVENTS_CHANNEL`, from outside their transactions, for one
 * pool (`eventsNotifier`).
 *
 * Why not `pg_notify` in the append's own transaction: PostgreSQL holds its notify queue's lock
 * from before a notifying transaction's commit record until after it is flushed, so notifying
 * transactions commit one at a time; concurrent appends that each notified ran at a third of
 * the rate of the same INSERTs without (bench/RESULTS.md, engine-steps). Here an append's
 * commit takes no such lock, and the notifications are coalesced: at most one in flight and
 * one pending, so any number of appends committed while one is sent cost one more.
 *
 * Every append committed before a `poke` is announced by a notification sent after it (one in
 * flight when it comes may have started before that commit, so it leaves one pending). If
 * the process dies between an append's commit and its notification, none is sent: every
 * reader that LISTENs also polls (the projector every second), and finds it then.
 *
 * A reader in this process on the same pool (the projector, beside capture in `annal start`)
 * is told at the poke itself (`onPoke`), without waiting for the notification to make its way
 * through PostgreSQL and back: a transaction of its own on a connection of the pool (which
 * may all be busy) and the listener's turn to read it. It is told again by the notification.
 */
export class EventsNotifier {
  readonly #pool: Pool;
  #sending: Promise<void> | undefined;
  #pending = false;
  readonly #local = new Set<() => void>();
  readonly #notify: string;
  /**
   * The payload of this notifier's notifications: a reader told of its pokes already
   * (`onPoke`) knows its own when they come back, and need not read again.
   */
  readonly token = randomUUID();
  /** Notifications sent, for tests. */
  sent = 0;

  constructor(pool: Pool) {
    this.#pool = pool;
    this.#notify = notifyStatement(this.token);
  }

  /**
   * Calls `listener` at each poke of this notifier, from then on, until the function returned
   * is called. The poke comes after the appends' commit: they are readable.
   */
  onPoke(listener: () => void): () => void {
    this.#local.add(listener);
    return () => this.#local.delete(listener);
  }

  /** Appends have committed: announce them (now, or after the notification in flight). */
  poke(): void {
    for (const listener of this.#local) listener();
    if (this.#sending) {
      this.#pending = true;
      return;
    }
    this.#sending = this.#send();
  }

  /** Resolves once no notification is in flight or pending (for a clean stop, and tests). */
  async idle(): Promise<void> {
    while (this.#sending) await this.#sending;
  }

  async #send(): Promise<void> {
    try {
      do {
        this.#pending = false;
        // Where a test holds a notification in flight to see later appends coalesce.
        await pausePoint("store.notify.beforeSend");
        // A failure (the pool ended, the server away) loses only this wake-up: readers poll.
        await this.#pool.query(this.#notify).then(
          () => this.sent++,
          () => {},
        );
      } while (this.#pending);
    } finally {
      this.#sending = undefined;
    }
  }
}

const notifiers = new WeakMap<Pool, EventsNotifier>();

/** The pool's one notifier (made on first use). */
export function eventsNotifier(pool: Pool): EventsNotifier {
  let notifier = notifiers.get(pool);
  if (!notifier) {
    notifier = new EventsNotifier(pool);
    notifiers.set(pool, notifier);
  }
  return notifier;
}

/** How an append on `db` is announced: see `announceAppend`. */
export interface Announcement {
  /** The append's own statement must notify, in its transaction (no one else can know when it commits). */
  readonly inStatement: boolean;
  /** Call once the append's statement has returned having stored events. */
  stored(): void;
}

/**
 * How an append on `db` announces itself. On the pool the statement is its own transaction,
 * committed when it returns: the pool's notifier is poked then. In a transaction opened by
 * `withTransaction` the notifier is poked once it commits (`afterCommit`). In any other
 * transaction (one a caller began itself) nothing here learns of its commit, so the statement
 * notifies inside it, as every append used to.
 */
export function announceAppend(db: Queryable): Announcement {
  if (db instanceof pg.Pool) {
    return { inStatement: false, stored: () => eventsNotifier(db).poke() };
  }
  const later = afterCommit(db, (pool) => eventsNotifier(pool).poke());
  return { inStatement: !later, stored() {} };
}
