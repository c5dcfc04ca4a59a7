import type { Queryable } from "../db/index.ts";
import { LARGE_DATA_BYTES, readJsonInChunks } from "../store/index.ts";
import {
  ENTRY_EVENT,
  ENTRY_EVENT_TYPES,
  type EntryEventType,
  type EntryState,
} from "../events/index.ts";

/**
 * Where an entry's stream stands: the state its last event left, its version (0: none) and
 * its last event's position (0: none).
 */
export interface LastEntryState {
  readonly state: EntryState | null;
  readonly version: number;
  readonly position: number;
}

/**
 * The entry's state as the last event of its stream `streamId` left it. Only the state is read
 * (`data->'after'`, or a snapshot's `data->'state'`): a change's event holds the states before
 * and after it, and for a group of 100,000 members reading both was 11 MB of JSON to parse, in
 * one piece, on capture's way to recording a one-member change.
 */
export async function lastEntryState(db: Queryable, streamId: string): Promise<LastEntryState> {
  const result = await db.query<{
    type: string;
    state: EntryState | null;
    large: boolean;
    stream_version: number;
    position: number;
  }>(
    `SELECT type, stream_version, position::int8 AS position,
            pg_column_size(data) > $4 AS large,
            CASE WHEN pg_column_size(data) > $4 THEN NULL ELSE ${STATE} END AS state
       FROM events WHERE stream_id = $1 ORDER BY stream_version DESC LIMIT 1`,
    [streamId, SNAPSHOT_TYPES, CHANGE_TYPES, LARGE_DATA_BYTES],
  );
  const last = result.rows[0];
  // A large entry's state is read in chunks: 5.6 MB of JSON for a group of 100,000 members,
  // parsed in one piece, held the event loop some 30 ms.
  const state = last?.large
    ? ((await readJsonInChunks(db, `SELECT ${STATE} AS value FROM events WHERE position = $1`, [
        last.position,
        SNAPSHOT_TYPES,
        CHANGE_TYPES,
      ])) as EntryState | null)
    : last?.state;
  return {
    state: state ?? null,
    version: last ? Number(last.stream_version) : 0,
    position: last ? Number(last.position) : 0,
  };
}

/** The state an entry event's data holds (`$2` the snapshots' types, `$3` the changes'). */
const STATE = `CASE WHEN type = ANY($2::text[]) THEN data->'state'
                    WHEN type = ANY($3::text[]) THEN data->'after' END`;

/** The entry events whose data holds the whole state. */
const SNAPSHOT_TYPES: readonly EntryEventType[] = [ENTRY_EVENT.snapshot, ENTRY_EVENT.checkpointed];
/** The entry events whose data holds the state after the change (null after a delete). */
const CHANGE_TYPES: readonly EntryEventType[] = ENTRY_EVENT_TYPES.filter(
  (type) => !SNAPSHOT_TYPES.includes(type),
);
