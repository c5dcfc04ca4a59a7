import type { PoolClient } from "../db/index.ts";
import type { AnnalEventType, RecordedOf } from "../events/index.ts";
import type { LogPosition } from "../store/index.ts";

/** What a projection's `apply` gets besides the events: its transaction and its tables. */
export interface ProjectionContext {
  /** The transaction the batch, and the checkpoint after it, are written in. */
  readonly tx: PoolClient;
  /** The quoted, schema-qualified name of one of the projection's tables. */
  table(name: string): string;
}

/**
 * A projection: tables derived from the log, disposable and rebuildable by replaying it.
 *
 * Its tables live in a schema of their own (`projection_<name>`) together with its
 * checkpoint, so a rebuild can fill a second schema while the first keeps serving reads and
 * then swap the two in one transaction.
 */
export interface Projection<T extends string = AnnalEventType> {
  /** Lower-case letters, digits and `_`; names the schema. */
  readonly name: string;
  /** Raise it when `tables` or `apply` change: the projection is then rebuilt at start. */
  readonly version: number;
  /** `CREATE TABLE` / `CREATE INDEX` statements; `table(name)` gives the qualified name. */
  readonly tables: (table: (name: string) => string) => readonly string[];
  /**
   * `CREATE INDEX` statements of indexes that only readers use, never `apply` (which finds
   * its rows by primary key). A replay builds them once, after it has applied the log,
   * instead of maintaining them row by row; a new live schema creates them with the tables.
   * Named (`CREATE INDEX <name> ON …`), they may also be dropped for a first start's bulk load
   * and built after its commit, concurrently, while the projection serves; a build that died
   * is found by name and done again (`buildReaderIndexes`).
   */
  readonly indexes?: (table: (name: string) => string) => readonly string[];
  /**
   * Catches up from the start with the machine to itself when it can (`Turns`, `alone`): a
   * first start's bulk load of what the REST channel serves (`entries`) was 43 s beside
   * `entry_versions`' 51 s at 100,000 entries, the channel serving nothing until it committed
   * (bench/RESULTS.md, first start). The other projections' loads then follow it.
   */
  readonly catchUpAlone?: boolean;
  /** The event types `apply` is given, typed by the vocabulary; the projector skips the others. */
  readonly handles: readonly T[];
  /**
   * Applies a batch of events, in order. A stream's events always arrive in stream-version
   * order, each exactly once. Must be deterministic: replaying the log gives the same tables.
   */
  apply(events: readonly RecordedOf<T>[], context: ProjectionContext): Promise<void>;
  /**
   * Applies a run of first snapshots (`EntrySnapshot` events at stream version 1: the first
   * start's import) set-wise, in a few statements over the events in the log, writing exactly
   * what `apply` would write for them: each opens its entry's stream, so the projection knows
   * nothing of the entry yet. Without it, a projection that handles snapshots applies them in
   * batches (`applyFirstSnapshotsInBulk`).
   */
  readonly applyFirstSnapshots?: (run: FirstSnapshots, context: ProjectionContext) => Promise<void>;
  /**
   * How a replay into a new schema (a rebuild, `replayInto`) applies the log set-wise, in the
   * place of `apply`: see `ReplayPlan`. Without it, a replay applies `apply` batch by batch.
   */
  readonly replay?: ReplayPlan<T>;
}

/**
 * A replay's set-wise path: the log's events are folded in memory into the rows of the
 * projection's tables, several events of one row becoming the one row they leave, and the rows
 * are written with COPY, many batches of the log at a time: straight into a table that nothing
 * was written to yet, otherwise into a temporary staging table and merged with one statement
 * (`INSERT … ON CONFLICT (key) DO UPDATE SET merge`, after a `DELETE` of the rows deleted).
 * What a replay leaves must be exactly what `apply` leaves, batch after batch.
 */
export interface ReplayPlan<T extends string = AnnalEventType> {
  /** The tables `fold` writes rows of; the others are left to `finish`. */
  readonly tables: readonly ReplayTable[];
  /**
   * Folds events, in log order, each stream's in version order, into the rows held since the
   * last write (`rows`): a row held is what the events since then leave of it, or, where
   * `merge` adds to the stored row, what they add.
   */
  fold(events: readonly RecordedOf<T>[], rows: ReplayRows): void;
  /** After the whole log is written: work done once over the tables (derived tables). */
  finish?(context: ProjectionContext): Promise<void>;
}

/** A table a replay writes by COPY. */
export interface ReplayTable {
  readonly name: string;
  /** The columns a row holds, in order. */
  readonly columns: readonly string[];
  /** The columns of its primary key (or of a unique index): a row held is found by them. */
  readonly key: readonly string[];
  /**
   * The `SET` list that merges a row held into the stored row of the same key (the stored one
   * is `t`, the held one `EXCLUDED`); by default the held row's every column but the key.
   */
  readonly merge?: string;
}

/** The rows a replay holds in memory since its last write, by table and key. */
export interface ReplayRows {
  /** The row held for `key` (the key columns' values), if one is held. */
  get(table: string, key: readonly unknown[]): readonly unknown[] | undefined;
  /** Holds `values` (in `columns` order) as the row of their key. */
  put(table: string, values: readonly unknown[]): void;
  /**
   * Deletes the row of `key`: the stored row goes, and a row put after this starts afresh
   * (it is inserted, not merged).
   */
  delete(table: string, key: readonly unknown[]): void;
}

/** A run of first snapshots in the log, each one an entry's first event. */
export interface FirstSnapshots {
  /**
   * `events AS e WHERE …`: the run's events as a FROM clause for the caller's statement, its
   * parameters appended to `params` (so the caller's own follow them).
   */
  from(params: unknown[]): string;
  /**
   * Whether this is the first, and the last, chunk of the run, all written in one transaction:
   * what a projection takes down for the load in the first (a key it would otherwise maintain
   * row by row) it puts back in the last.
   */
  readonly first: boolean;
  readonly last: boolean;
}

export interface ProjectionStatus {
  readonly name: string;
  /** The version in code. */
  readonly version: number;
  /** The version the live tables were built by (undefined before the first start). */
  readonly builtVersion: number | undefined;
  readonly position: LogPosition;
  /** Readable events not applied yet. */
  readonly lag: number;
}

/** Any projection, whatever event types it handles: what the projector runs. */
export type AnyProjection = Projection<string>;
