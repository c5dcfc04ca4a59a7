import type { AnnalConfig } from "../../config/index.ts";
import type { Queryable } from "../../db/index.ts";
import { readCheckpointOnPool, schemaNames } from "../../projector/index.ts";
import { holdsDirectoryAt } from "../../history/index.ts";
import { comparePositions, type LogPosition } from "../../store/index.ts";
import type { ReadSource } from "../context.ts";

/** The projection the gateway's reads answer from. */
const ENTRIES = "entries";

/**
 * How long the `entries` projection's checkpoint, read for one request, stands for the
 * requests that start after it: theirs reflect at least it (the projection only moves on), and
 * a request that finds it older reads it anew. Raised at once by each mutation's wait
 * (`written`), so that the requests after a write report a position at or after it.
 */
export const CHECKPOINT_TTL_MS = 250;

/** Each database's last checkpoint read (or being read) by a request, and when. */
const checkpoints = new WeakMap<
  Queryable,
  { at: number; value: Promise<LogPosition | undefined> }
>();

/** The `entries` projection's applied position, as read at most `ttlMs` ago. */
function appliedPosition(db: Queryable, ttlMs: number): Promise<LogPosition | undefined> {
  const now = Date.now();
  const kept = checkpoints.get(db);
  if (kept !== undefined && now - kept.at <= ttlMs) return kept.value;
  const value = readCheckpointOnPool(db, schemaNames(ENTRIES).live).then(
    (checkpoint) =>
      checkpoint && { transactionId: checkpoint.transactionId, position: checkpoint.position },
  );
  checkpoints.set(db, { at: now, value });
  value.catch(() => {
    if (checkpoints.get(db)?.value === value) checkpoints.delete(db);
  });
  return value;
}

/** A position the projection is known to have applied (a mutation waited for it). */
function raiseApplied(db: Queryable, reached: LogPosition): void {
  const kept = checkpoints.get(db);
  if (kept === undefined) return;
  const value = kept.value.then((applied) =>
    applied && comparePositions(applied, reached) >= 0 ? applied : reached,
  );
  checkpoints.set(db, { at: kept.at, value });
}

/**
 * Where one request reads entries, and which log position its answer reflects
 * (`extensions.logPosition`): the `entries` projection's checkpoint when the request began,
 * raised to the position each of its mutations waited for (read-your-writes: the requests
 * after it read their writes). A mutation reads the directory (`extensions.reads:
 * "directory"`), so its answer shows its write whether or not the projections show it within
 * `[graphql] readYourWritesTimeout`; a query reads the projections.
 *
 * @example
 * const state = await ReadState.start({ config, projection });
 * // ... run the document with it ...
 * reply.send({ data, ...state.extensions() }); // { extensions: { logPosition: {...}, reads } }
 */
export class ReadState {
  #source: ReadSource;
  #position: LogPosition | undefined;
  #projected: boolean;
  #at: Date | undefined;
  #db: Queryable | undefined;

  private constructor(
    source: ReadSource,
    position: LogPosition | undefined,
    db: Queryable | undefined,
  ) {
    this.#source = source;
    this.#position = position;
    this.#projected = source === "projection";
    this.#db = db;
  }

  /** The state of a request starting now: `[graphql] reads`, where capture allows it. */
  static async start(options: {
    readonly config: AnnalConfig;
    readonly projection?: { readonly db: Queryable } | undefined;
    /** How old a checkpoint read for another request may be (`CHECKPOINT_TTL_MS`). */
    readonly checkpointTtlMs?: number;
  }): Promise<ReadState> {
    if (options.projection === undefined || options.config.graphql.reads !== "projection") {
      return new ReadState("directory", undefined, undefined);
    }
    // Read before any entry is: the answer reflects at least this position. On the pool, in
    // one round trip, and at most once every `CHECKPOINT_TTL_MS` for all the requests.
    const { db } = options.projection;
    const applied = await appliedPosition(db, options.checkpointTtlMs ?? CHECKPOINT_TTL_MS);
    // Until the projection holds the directory (a first start, whose import or its projection
    // is still under way), the directory answers, not a projection missing entries; once it
    // has, its lag is capture's lag.
    if (!(await holdsDirectoryAt(db, ENTRIES, applied)))
      return new ReadState("directory", undefined, undefined);
    return new ReadState("projection", applied, db);
  }

  /** Where the request's reads go now. */
  get source(): ReadSource {
    return this.#source;
  }

  /**
   * Turns the request's reads to the history at `at` (an operation asked `@at`): they read
   * the versions valid then, and `extensions.at` names the moment.
   */
  readAt(at: Date): void {
    this.#at = at;
    this.#source = "projection";
    this.#projected = true;
  }

  /** Turns the request's reads to the directory (a mutation's). */
  readDirectory(): void {
    this.#source = "directory";
  }

  /**
   * Runs a mutation's wait for its change (`afterWrite`): the position it reached raises the
   * request's. A `ProjectionTimeoutError` is thrown on (the mutation logs it) and leaves the
   * position where it was: the answer, read from the directory, stands.
   */
  async written(wait: () => Promise<LogPosition | void>): Promise<void> {
    const reached = await wait();
    if (reached && (!this.#position || comparePositions(reached, this.#position) > 0)) {
      this.#position = reached;
    }
    // The requests after it report at least the write's position (read-your-writes).
    if (reached && this.#db !== undefined) raiseApplied(this.#db, reached);
  }

  /** The response's `extensions`: none when the request never read the projections. */
  extensions(): {
    extensions?: { logPosition: LogPosition | null; reads: ReadSource; at?: string };
  } {
    if (!this.#projected) return {};
    const at = this.#at === undefined ? {} : { at: this.#at.toISOString() };
    return { extensions: { logPosition: this.#position ?? null, reads: this.#source, ...at } };
  }
}
