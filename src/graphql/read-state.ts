import type { AnnalConfig } from "../config/index.ts";
import type { Queryable } from "../db/index.ts";
import { readCheckpoint, schemaNames } from "../projector/index.ts";
import { comparePositions, type LogPosition } from "../store/index.ts";
import type { ReadSource } from "./context.ts";

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
  readonly #projected: boolean;

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
    // Read before any entry is: the answer reflects at least this position.
    const checkpoint = await readCheckpoint(options.projection.db, schemaNames(ENTRIES).live);
    return new ReadState(
      "projection",
      checkpoint && { transactionId: checkpoint.transactionId, position: checkpoint.position },
    );
  }

  /** Where the request's reads go now. */
  get source(): ReadSource {
    return this.#source;
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
  extensions(): { extensions?: { logPosition: LogPosition | null; reads: ReadSource } } {
    if (!this.#projected) return {};
    return { extensions: { logPosition: this.#position ?? null, reads: this.#source } };
  }
}
