import { normalizeDN } from "../../src/directory/index.ts";
import {
  ENTRY_EVENT,
  stateAfterEvent,
  type EntryEventType,
  type RecordedOf,
} from "../../src/events/index.ts";
import { operationalTime } from "../entry-events.ts";
import type { EntriesRow } from "./tables.ts";

/**
 * The row of `entries` that an entry's events leave, `first` the event that made it (the first
 * after its last delete) and `last` its last; undefined when the last leaves no entry.
 */
export function entryRow(
  uuid: string,
  first: RecordedOf<EntryEventType>,
  last: RecordedOf<EntryEventType>,
): EntriesRow | undefined {
  const state = stateAfterEvent(last);
  if (!state) return undefined;
  const firstState = stateAfterEvent(first);
  // A checkpoint stands for the events retention removed: it says when the entry was made.
  const created = first.type === ENTRY_EVENT.checkpointed ? first.data.created : null;
  const snapshotLast =
    last.type === ENTRY_EVENT.snapshot ||
    (last.type === ENTRY_EVENT.checkpointed && last.data.lastType === ENTRY_EVENT.snapshot);
  return {
    entry_uuid: uuid,
    type: state.type,
    dn: state.dn,
    dn_norm: normalizeDN(state.dn),
    attributes: state.attributes,
    operational: state.operational,
    created_at:
      operationalTime(firstState, "createTimestamp") ??
      (created ? new Date(created.occurredAt) : first.occurredAt),
    modified_at: snapshotLast
      ? (operationalTime(state, "modifyTimestamp") ?? last.occurredAt)
      : last.occurredAt,
    version: last.streamVersion,
    created_position: created?.position ?? first.position,
    position: last.position,
    transaction_id: last.transactionId,
  };
}

/** The columns of `entries`, in the order a COPY of its rows lists them. */
export const ENTRY_ROW_COLUMNS = [
  "entry_uuid",
  "type",
  "dn",
  "dn_norm",
  "attributes",
  "operational",
  "created_at",
  "modified_at",
  "version",
  "created_position",
  "position",
  "transaction_id",
] as const satisfies readonly (keyof EntriesRow)[];
