import type { Logger } from "pino";
import type { Pool } from "../db/index.ts";
import type { EventStore, LogPosition } from "../store/index.ts";
import type { DirectoryClient } from "../directory/index.ts";
import type { Normalizer } from "./normalize.ts";

/** What every capture source needs. */
export interface CaptureContext {
  readonly pool: Pool;
  readonly store: EventStore;
  readonly directory: DirectoryClient;
  readonly normalizer: Normalizer;
  /** The directory base: only entries at or below it are captured. */
  readonly base: string;
  readonly log: Pick<Logger, "info" | "warn" | "error" | "debug">;
  /**
   * Values one write of an import holds at most (`[directory.capture] valuesPerWrite`;
   * `DEFAULT_VALUES_PER_WRITE` when not given).
   */
  readonly valuesPerWrite?: number;
  /**
   * Run once, on the first start, just before the first import: what the log should hold
   * before the directory's snapshots (the demo's past, `seedDemoHistory`). Returns the events
   * it appended.
   */
  readonly beforeFirstImport?: (context: CaptureContext) => Promise<number>;
}

/** What a capture run did. */
export interface CaptureResult {
  /** Events stored by this run. */
  readonly recorded: number;
  /** The log position of the last event stored (for read-your-writes), if any. */
  readonly position?: LogPosition;
}
