import { withTransaction, type Pool } from "../db/index.ts";
import { WrongExpectedVersionError, type RecordedEvent } from "../store/index.ts";
import { commit, insertTimers, wake, type Commit, type CommitDeps } from "./commit.ts";

/** The most commits one group's transaction writes. */
const MAX_GROUP = 64;

interface Member {
  readonly work: Commit;
  resolve(recorded: RecordedEvent[][]): void;
  reject(error: unknown): void;
}

/**
 * Writes a commit of one append (and its timers and wake-ups), sharing a transaction with the
 * commits of other instances that this process makes meanwhile (group commit). Resolves once
 * the transaction that holds it has committed, exactly as `commit` would: the durability is the
 * same, the commits fewer.
 *
 * Why: every append notifies tailing readers (`pg_notify`), and PostgreSQL holds its notify
 * queue's lock from before a notifying transaction's commit record until after it is flushed,
 * so notifying transactions commit one at a time. Eight instances stepping at once each
 * committing alone ran at 280 appends a second where plain INSERTs ran at 800 to 2,400
 * (bench/RESULTS.md, engine-steps). One transaction for the steps that arrive while the
 * previous group commits notifies once for all of them.
 *
 * An append whose expected version does not hold fails alone (the group goes on without it);
 * any other failure of the group's transaction sends each of its commits on alone.
 */
export function commitInGroup(deps: CommitDeps, work: Commit): Promise<RecordedEvent[][]> {
  if (work.appends.length !== 1 || work.appends[0]!.events.some((e) => e.idempotencyKey)) {
    return commit(deps, work);
  }
  let group = groups.get(deps.pool);
  if (!group) {
    group = new GroupCommitter(deps);
    groups.set(deps.pool, group);
  }
  return group.add(work);
}

const groups = new WeakMap<Pool, GroupCommitter>();

class GroupCommitter {
  readonly #deps: CommitDeps;
  #queue: Member[] = [];
  #draining = false;

  constructor(deps: CommitDeps) {
    this.#deps = deps;
  }

  add(work: Commit): Promise<RecordedEvent[][]> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ work, resolve, reject });
      if (!this.#draining) void this.#drain();
    });
  }

  /** One group at a time: the commits that came while one group committed form the next. */
  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      while (this.#queue.length > 0) {
        const group = this.#queue.splice(0, MAX_GROUP);
        await this.#commitGroup(group);
      }
    } finally {
      this.#draining = false;
    }
  }

  async #commitGroup(group: readonly Member[]): Promise<void> {
    if (group.length === 1) return alone(this.#deps, group[0]!);
    const deps = this.#deps;
    const failed = new Map<Member, WrongExpectedVersionError>();
    let recorded: Map<Member, RecordedEvent[][]>;
    try {
      recorded = await withTransaction(deps.pool, async (tx) => {
        const done = new Map<Member, RecordedEvent[][]>();
        for (const member of group) {
          const append = member.work.appends[0]!;
          try {
            // The one statement writes nothing when the version does not hold; the check
            // after it throws in JavaScript, leaving the transaction usable for the others.
            const result = await deps.store.appendToStream(append.streamId, append.events, {
              tx,
              expectedVersion: append.expectedVersion,
              keysSerialised: true,
            });
            done.set(member, [[...result.events]]);
          } catch (error) {
            if (!(error instanceof WrongExpectedVersionError)) throw error;
            failed.set(member, error);
          }
        }
        const decided = group.filter((member) => done.has(member));
        await insertTimers(
          tx,
          decided.flatMap((member) => member.work.timers ?? []),
        );
        await wake(
          deps.jobs,
          tx,
          decided.flatMap((member) => member.work.wakes ?? []),
        );
        return done;
      });
    } catch {
      // The group as a whole failed (a lost connection, a deadlock with another writer):
      // each commit goes alone and meets its own outcome.
      await Promise.all(group.map((member) => alone(deps, member)));
      return;
    }
    for (const member of group) {
      const error = failed.get(member);
      if (error) member.reject(error);
      else member.resolve(recorded.get(member)!);
    }
  }
}

async function alone(deps: CommitDeps, member: Member): Promise<void> {
  try {
    member.resolve(await commit(deps, member.work));
  } catch (error) {
    member.reject(error);
  }
}
