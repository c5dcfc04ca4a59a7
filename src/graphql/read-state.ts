import type { AnnalConfig } from "../config/index.ts";
import type { Queryable } from "../db/index.ts";
import { ProjectionTimeoutError, readCheckpoint, schemaNames } from "../projector/index.ts";
import { comparePositions, type LogPosition } from "../store/index.ts";
import type { ReadSource } from "./context.ts";

/** The projection the gateway's reads answer from. */
const ENTRIES = "entries";

/**
 * Where one request reads entries, and which log position its answer reflects
 * (`extensions.logPosition`): the `entries` projection's checkpoint when the request began,
 * raised to the position each of its mutations waited for (read-your-writes). A mutation
 * whose change the projections did not show within `[graphql] readYourWritesTimeout` turns
 * the rest of the request to the directory (`extensions.reads: "directory"`), so that its
 * answer still shows the write.
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

  /**
   * Runs a mutation's wait for its change (`afterWrite`): the position it reached raises the
   * request's; a timeout turns the request to the directory (and is thrown on, to be logged).
   */
  async written(wait: () => Promise<LogPosition | void>): Promise<void> {
    try {
      const reached = await wait();
      if (reached && (!this.#position || comparePositions(reached, this.#position) > 0)) {
        this.#position = reached;
      }
    } catch (error) {
      if (error instanceof ProjectionTimeoutError) this.#source = "directory";
      throw error;
    }
  }

  /** The response's `extensions`: none when the request never read the projections. */
  extensions(): { extensions?: { logPosition: LogPosition | null; reads: ReadSource } } {
    if (!this.#projected) return {};
    return { extensions: { logPosition: this.#position ?? null, reads: this.#source } };
  }
}
