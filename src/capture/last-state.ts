import type { Queryable } from "../db/index.ts";
import { ENTRY_EVENT_TYPES, asEventOf, stateAfterEvent, type EntryState } from "../events/index.ts";
import { readLastEvent } from "../store/index.ts";

/**
 * Where an entry's stream stands: the state its last event left, its version (0: none) and
 * its last event's position (0: none).
 */
export interface LastEntryState {
  readonly state: EntryState | null;
  readonly version: number;
  readonly position: number;
}

/** The entry's state as the last event of its stream `streamId` left it. */
export async function lastEntryState(db: Queryable, streamId: string): Promise<LastEntryState> {
  const last = await readLastEvent(db, streamId);
  const event = last && asEventOf(last, ENTRY_EVENT_TYPES);
  return {
    state: event ? stateAfterEvent(event) : null,
    version: last?.streamVersion ?? 0,
    position: last?.position ?? 0,
  };
}
