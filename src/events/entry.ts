import type { AnnalEvent } from "./vocabulary.ts";
import type { Operation } from "rfc6902";

/** The event types capture appends, one stream per entry (`entryStream`). */
export const ENTRY_EVENT = {
  added: "EntryAdded",
  modified: "EntryModified",
  renamed: "EntryRenamed",
  deleted: "EntryDeleted",
  snapshot: "EntrySnapshot",
  /** The stream folded at the retention horizon (`StreamCheckpointed`, src/events/retention.ts). */
  checkpointed: "StreamCheckpointed",
} as const;

/** Every event type of an entry's stream. */
export type EntryEventType = (typeof ENTRY_EVENT)[keyof typeof ENTRY_EVENT];
export const ENTRY_EVENT_TYPES: readonly EntryEventType[] = Object.values(ENTRY_EVENT);

/** The event types of a change (every entry event but the snapshot). */
export type EntryChangeType = (typeof ENTRY_CHANGE_TYPES)[number];

export const ENTRY_CHANGE_TYPES = [
  ENTRY_EVENT.added,
  ENTRY_EVENT.modified,
  ENTRY_EVENT.renamed,
  ENTRY_EVENT.deleted,
] as const;

export type ChangeType = "add" | "modify" | "modrdn" | "delete";

export const changeTypeOf: Record<EntryChangeType, ChangeType> = {
  EntryAdded: "add",
  EntryModified: "modify",
  EntryRenamed: "modrdn",
  EntryDeleted: "delete",
};

/** Attribute name → values; always a list; binary values as base64. */
export type AttributeMap = Record<string, string[]>;

/** An entry as the log knows it. Redacted attributes are never part of it. */
export interface EntryState {
  readonly dn: string;
  /** The first configured type whose base and filter the entry matches; null for none. */
  readonly type: string | null;
  /** User attributes (what `fields=*` serves). */
  readonly attributes: AttributeMap;
  /** Operational attributes (`fields=+`): entryUUID, timestamps, creatorsName, ... */
  readonly operational: AttributeMap;
}

/** Data of EntryAdded, EntryModified, EntryRenamed and EntryDeleted. */
export interface EntryChange {
  readonly entryUUID: string;
  readonly changeType: ChangeType;
  readonly dn: string;
  /** For a rename: the DN before it. */
  readonly oldDn?: string;
  readonly before: EntryState | null;
  readonly after: EntryState | null;
  /** RFC 6902 patch from `before.attributes` to `after.attributes` (user attributes). */
  readonly patch: Operation[];
  /** The user attributes the change touched, redacted ones included (by name only). */
  readonly attributes: string[];
  /** Redacted attributes the change touched: their values were never recorded. */
  readonly redacted: string[];
  /** True when found by polling (no actor, the moment is the observed modifyTimestamp). */
  readonly observed?: boolean;
}

/** Data of EntrySnapshot: the whole entry at a moment (import, periodic, reconciliation). */
export interface EntrySnapshot {
  readonly entryUUID: string;
  readonly reason: "import" | "periodic" | "reconcile";
  readonly state: EntryState;
}

/** The stream of one entry, keyed by entryUUID so a renamed entry keeps its history. */
export const entryStream = (entryUUID: string) => `entry-${entryUUID.toLowerCase()}`;

/** The entry's state after an entry event: null after a delete. */
export function stateAfterEvent(event: AnnalEvent<EntryEventType>): EntryState | null {
  if (event.type === ENTRY_EVENT.snapshot || event.type === ENTRY_EVENT.checkpointed) {
    return event.data.state;
  }
  return event.data.after;
}
