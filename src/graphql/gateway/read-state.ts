import type { AnnalConfig } from "../../config/index.ts";
import type { Queryable } from "../../db/index.ts";
import { readCheckpointOnPool, schemaNames } from "../../projector/index.ts";
import { holdsDirectoryAt } from "../../history/index.ts";
import { comparePositions, type LogPosition } from "../../store/index.ts";
import type { ReadSource } from "../context.ts";

/** The projection the gateway's reads answer from. */
const ENTRIES = "entries";

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

  private constructor(source: ReadSource, position: LogPosition | undefined) {
    this.#source = source;
    this.#position = position;
    this.#projected = source === "projection";
  }

  /** The state of a request starting now: `[graphql] reads`, where capture allows it. */
  static async start(options: {
    readonly config: AnnalConfig;
    readonly projection?: { readonly db: Queryable } | undefined;
  }): Promise<ReadState> {
    if (options.projection === undefined || options.config.graphql.reads !== "projection") {
      return new ReadState("directory", undefined);
    }
    // Read before any entry is: the answer reflects at least this position. On the pool, in
    // one round trip: every request reads it.
    const { db } = options.projection;
    const checkpoint = await readCheckpointOnPool(db, schemaNames(ENTRIES).live);
    const applied = checkpoint && {
      transactionId: checkpoint.transactionId,
      position: checkpoint.position,
    };
    // Until the projection holds the directory (a first start, whose import or its projection
    // is still under way), the directory answers, not a projection missing entries; once it
    // has, its lag is capture's lag.
    if (!(await holdsDirectoryAt(db, ENTRIES, applied)))
      return new ReadState("directory", undefined);
    return new ReadState("projection", applied);
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
