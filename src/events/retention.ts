import type { EntryState } from "./entry.ts";

/** A link of the hash chain, named by its event's position and its hash (hex). */
export interface ChainHeadRef {
  readonly position: number;
  readonly hash: string;
}

/** The events a checkpoint replaced: their positions, versions and how many. */
export interface ReplacedEvents {
  readonly fromPosition: number;
  readonly toPosition: number;
  readonly fromVersion: number;
  readonly toVersion: number;
  readonly count: number;
}

/**
 * Data of StreamCheckpointed: an entry's stream folded at the retention horizon into the state
 * its removed events left. It takes the place (position, transaction, version) of the last
 * event it replaced, so every reader meets it where that event was; the projections read it
 * as the entry's first event, and what they kept of the removed events rides along (`since`,
 * `created`) so their rows after the horizon stay as they were.
 */
export interface StreamCheckpointed {
  readonly entryUUID: string;
  /** The entry at the horizon; null when it was deleted before it. */
  readonly state: EntryState | null;
  /** The type of the last event replaced (a snapshot's time is its modifyTimestamp). */
  readonly lastType: string;
  /**
   * The version valid at the horizon: the version, moment and position it started at, and the
   * entry's DN and type then (a deleted entry's are those it had before the delete).
   */
  readonly since: {
    readonly version: number;
    readonly occurredAt: string;
    readonly position: number;
    readonly dn: string;
    readonly type: string | null;
  };
  /** The event that made the entry (after its last delete): its position and moment. */
  readonly created: { readonly position: number; readonly occurredAt: string } | null;
  /** The retention horizon (ISO 8601). */
  readonly horizon: string;
  readonly replaced: ReplacedEvents;
  /** The chain's last link before the cut: what the kept chain continues from. */
  readonly chainHead: ChainHeadRef;
}

/**
 * Data of WorkflowCheckpointed: a finished instance's stream (completed, errored or cancelled
 * before the horizon) folded into the state its removed events left, the engine's own fold
 * (`stateToJson` of `foldInstance`: every call with its outcome). It takes the place of the last
 * event it replaced, like `StreamCheckpointed`; the engine and the projections fold on from it,
 * so an errored instance can still be retried.
 */
export interface WorkflowCheckpointed {
  readonly instanceId: string;
  /** The instance's state at the last event replaced, as `stateToJson` writes it. */
  readonly state: unknown;
  /** The workflow streams' retention horizon (ISO 8601). */
  readonly horizon: string;
  readonly replaced: ReplacedEvents;
  /** The chain's last link before the cut: what the kept chain continues from. */
  readonly chainHead: ChainHeadRef;
}

/** The events retention puts in the place of a stream's folded events. */
export const CHECKPOINT_EVENT_TYPES: ReadonlySet<string> = new Set([
  "StreamCheckpointed",
  "WorkflowCheckpointed",
]);

/** The stream retention records its runs on. */
export const RETENTION_STREAM = "log-retention";

/** Data of LogRetained: one retention run, inside the chain. */
export interface LogRetained {
  readonly horizon: string;
  /**
   * The workflow instances' horizon, when the run folded finished instances: those that
   * finished before it (and before the cut) are checkpoints now.
   */
  readonly workflowHorizon?: string;
  /** The first event kept in the chain (log order). */
  readonly cut: { readonly position: number; readonly transactionId: string };
  /** The chain's last link before the cut: the first kept link's previous hash. */
  readonly chainHead: ChainHeadRef;
  /**
   * sha256 over the content digests of the events left before the cut (checkpoints, kinds kept
   * whole), in log order, each as first recorded (an erased event by its digest before erasure):
   * `annal log verify` recomputes it, as the chain no longer covers them.
   */
  readonly keptDigest: string;
  readonly keptEvents: number;
  readonly streamsFolded: number;
  readonly eventsRemoved: number;
}

/** The stream erasures are recorded on. */
export const ERASURE_STREAM = "erasures";

/**
 * Data of EntryErased: one person's values redacted in the log on request. It says what was
 * erased (attribute names, the events changed, each with its content digest before, which
 * keeps the hash chain verifiable) and why; never a value.
 */
export interface EntryErased {
  readonly entryUUID: string;
  readonly attributes: readonly string[];
  /** Each event changed: its content digest before and after the erasure (hex). */
  readonly events: readonly {
    readonly position: number;
    readonly digest: string;
    readonly erasedDigest: string;
  }[];
  readonly reason: string;
}

/** What an erased value reads as, in the log and every projection. */
export const ERASED_VALUE = "(erased)";
