import type { DirectoryEntry } from "../directory/index.ts";
import { dnEquals, isDescendantOf } from "../directory/index.ts";
import { readAccesslogEntry, type AccesslogRecord } from "./accesslog.ts";
import type { CaptureContext } from "./context.ts";
import { ACCESSLOG } from "./from-accesslog.ts";
import { recordLoggedWrites } from "./logged-writes.ts";

/** Records taken at most in one transaction. */
const BATCH = 500;
/**
 * Records waiting at most: beyond, the directory writes faster than they are recorded one
 * push at a time, and the waiting ones are dropped for a pass, which reads them in pages.
 */
const WAITING_AT_MOST = 5000;

/**
 * Records the writes the directory pushes on the accesslog watch as they come, without a
 * search: a pass woken by the push searched the accesslog again for what the push had just
 * sent, and that search, not the write, was most of a change's way to the log (64 ms of a
 * p50 of 160 at 100,000 entries, where the accesslog held every entry's add).
 *
 * A pushed record is taken only where it is known to be the next: the watch opened from the
 * checkpoint, and slapd sends its records in the order it logs them (its accesslog adds are
 * made one at a time, and syncprov queues each as it is made), so each record follows the one
 * pushed before it, and the first follows the checkpoint the watch opened from. A batch is
 * recorded only if capture's checkpoint stands where the record before it was (or past it,
 * when a pass took it first); otherwise, or on any failure, a pass is asked for (`onGap`),
 * which reads from the checkpoint as ever. Nothing is lost by this path: the worst it can do
 * is leave a record to the next pass.
 */
export class PushedWrites {
  private readonly context: CaptureContext;
  private readonly onGap: () => void;
  private waiting: (() => Promise<DirectoryEntry>)[] = [];
  private running: Promise<void> | undefined;
  /** The place of the last record pushed (in the base or not), once known. */
  private follows: string | undefined;

  /** `opened`: the checkpoint the watch's search was opened from. */
  constructor(context: CaptureContext, opened: string, handlers: { onGap(): void }) {
    this.context = context;
    this.follows = opened;
    this.onGap = handlers.onGap;
  }

  /** Takes a pushed entry; it is decoded and recorded in turn, after those before it. */
  take(read: () => Promise<DirectoryEntry>): void {
    if (this.waiting.length >= WAITING_AT_MOST) {
      // Too far behind: a pass reads what is dropped. The chain is broken until the next
      // record's place is known, and that record is left to the pass too.
      this.waiting = [];
      this.follows = undefined;
      this.onGap();
      return;
    }
    this.waiting.push(read);
    this.running ??= this.run().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves once every record taken so far is recorded or left to a pass. */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  private async run(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, BATCH);
      const follows = this.follows;
      try {
        // The checkpoint moves over records in the base only (a pass records no other), so
        // the place a record follows is that of the last one in the base.
        const records: AccesslogRecord[] = [];
        for (const read of batch) {
          const record = await readAccesslogEntry(await read());
          if (record && inBase(record.dn, this.context.base)) records.push(record);
        }
        if (records.length === 0) continue;
        this.follows = records.at(-1)!.reqEnd;
        if (follows === undefined) {
          this.onGap();
          continue;
        }
        const result = await recordLoggedWrites(this.context, ACCESSLOG, records, { follows });
        if (result.behindUnrecorded) {
          this.context.log.error(
            { records: result.behindUnrecorded },
            "the directory sent accesslog records behind capture's checkpoint that are not in the log: it sent them out of the order it logged them, and capture, which reads on from its checkpoint, has passed them; the entries' state is recorded again by the next snapshot",
          );
        }
        if (result.gap) this.onGap();
      } catch (error) {
        this.follows = undefined;
        this.context.log.warn(
          { err: error },
          "a write the directory pushed could not be recorded as it came; a pass records it",
        );
        this.onGap();
      }
    }
  }
}

function inBase(dn: string, base: string): boolean {
  return dnEquals(dn, base) || isDescendantOf(dn, base);
}
