import type pg from "pg";
import { AnnalError } from "../errors/index.ts";
import type { Pool } from "./pool.ts";
import { sideConnection } from "./side-connection.ts";

/** A session advisory lock held on the lock connection; `release` is idempotent. */
export interface SessionLock {
  release(): Promise<void>;
}

/**
 * Session advisory locks that cost the pool nothing: every lock this process takes against a
 * pool's database is held on ONE connection of its own, opened beside the pool (not from it)
 * on first use and closed when the pool ends.
 *
 * Why: a lock held on a pooled connection pins that connection for as long as the work under
 * the lock runs, and the work needs connections of its own. With as many lock holders as the
 * pool has connections, every holder waited for a connection that only a holder could give
 * back: annal hung for good (issue 35, item 11). Here the work under a lock never competes
 * with the lock for a connection, whatever the pool's size and however many locks are held,
 * so no setting can deadlock that way.
 *
 * Callers take and release locks at the same time, so the connection pipelines (pg's
 * `pipeline` mode): each statement is sent at once and answered in turn, where pg would
 * otherwise queue them itself, which it deprecates (and pg 9 removes).
 *
 * Why only `pg_try_advisory_lock`: statements on one connection run one after another, so a
 * statement that waited in the database for a lock would hold up every other lock's take and
 * release behind it (and its holder's release could be queued behind it: a deadlock of its
 * own). A try returns at once; waiting is done here, by trying again (`waitMs`).
 *
 * Session locks are reentrant in PostgreSQL: the one connection would grant a key twice. So
 * the keys this process holds are also kept here, and a second take of a held key is refused
 * without asking the database.
 *
 * When the connection breaks, PostgreSQL lets every lock on it go. Their holders are not
 * stopped: another process may then take a key a holder here still works under, exactly as
 * when a process holding a lock is cut off from the database. What the lock protects must
 * therefore also be safe without it (the engine appends with the version it read).
 */
export async function trySessionLock(
  pool: Pool,
  key: string,
  options: { readonly waitMs?: number } = {},
): Promise<SessionLock | undefined> {
  const deadline = performance.now() + (options.waitMs ?? 0);
  const locks = lockConnectionOf(pool);
  for (let pause = 10; ; pause = Math.min(pause * 2, 100)) {
    const lock = await locks.tryLock(key);
    if (lock || performance.now() + pause > deadline) return lock;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** Closes the pool's lock connection, letting every lock on it go. Called by the pool's `end`. */
export async function closeSessionLocks(pool: Pool): Promise<void> {
  const locks = connections.get(pool);
  connections.delete(pool);
  await locks?.close();
}

const connections = new WeakMap<Pool, LockConnection>();

function lockConnectionOf(pool: Pool): LockConnection {
  let locks = connections.get(pool);
  if (!locks) {
    if (pool.ending) {
      throw new AnnalError("ANNAL_INTERNAL", "a session lock was asked of a pool that has ended");
    }
    locks = new LockConnection(pool);
    connections.set(pool, locks);
  }
  return locks;
}

/** The one connection and the keys held on it. */
class LockConnection {
  readonly #pool: Pool;
  /** The key of every lock this process holds (or is taking), with the client it is held on. */
  readonly #held = new Map<string, Promise<pg.Client> | undefined>();
  #client: Promise<pg.Client> | undefined;
  #closed = false;

  constructor(pool: Pool) {
    this.#pool = pool;
  }

  async tryLock(key: string): Promise<SessionLock | undefined> {
    if (this.#closed || this.#held.has(key)) return undefined;
    // Claimed before the first await, so a second take of the key in this process is refused.
    this.#held.set(key, undefined);
    let client: Promise<pg.Client>;
    let taken: boolean;
    try {
      client = this.#connection();
      const result = await (
        await client
      ).query<{
        locked: boolean;
      }>("SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked", [key]);
      taken = result.rows[0]?.locked === true;
    } catch (error) {
      this.#held.delete(key);
      throw error;
    }
    if (!taken) {
      this.#held.delete(key);
      return undefined;
    }
    this.#held.set(key, client);
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        try {
          // A broken or replaced connection took the lock with it: nothing to unlock.
          if (client === this.#client) {
            await (await client).query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [key]);
          }
        } catch {
          // The connection broke: its end let the lock go.
          this.#drop(client);
        } finally {
          this.#held.delete(key);
        }
      },
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    if (client) await (await client.catch(() => undefined))?.end().catch(() => {});
  }

  /** The open connection, or a new one (the first lock, or after the last one broke). */
  #connection(): Promise<pg.Client> {
    if (this.#client) return this.#client;
    const client = sideConnection(this.#pool, "annal-locks", { pipeline: true });
    const opened = client.connect().then(() => client);
    this.#client = opened;
    // A connection that ends or fails is replaced at the next take; PostgreSQL has let its locks go.
    client.on("error", () => this.#drop(opened));
    client.on("end", () => this.#drop(opened));
    opened.catch(() => this.#drop(opened));
    return opened;
  }

  #drop(client: Promise<pg.Client>): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    void client.then((c) => c.end()).catch(() => {});
  }
}
