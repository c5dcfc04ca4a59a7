import {
  ENTRY_EVENT,
  ENTRY_EVENT_TYPES,
  stateAfterEvent,
  type EntryEventType,
  type RecordedOf,
} from "../../src/events/index.ts";
import type { Projection } from "../../src/projector/index.ts";
import { ENTRIES_PROJECTION, entriesIndexes, entriesTables } from "./tables.ts";
import { indexEntryValues } from "./values.ts";
import { entryRow } from "./row.ts";
import { entriesReplay } from "./replay.ts";
import { insertFirstSnapshots } from "./first-snapshots.ts";
import { jsonbParameter } from "../../src/store/index.ts";

/**
 * `entries`: the current state of every entry. Attributes are JSON objects of name → list of
 * values (binary values base64); deleted entries are removed. Beside them, `entry_values` indexes
 * every value case-folded (see `entriesTables`), brought up to date once per batch for the
 * entries the batch touched. A batch costs a few statements whatever its size: each entry's
 * outcome is worked out here and written at once.
 *
 * Version 2: `entry_values`, `entry_value_counts` and the (type, dn) index. Version 3:
 * `created_position`, the directory's order of its entries. Version 4: the index of the
 * entries' parents (`entries_parent`). Version 5: the index of the values after an entry's
 * first (`entry_values_later`), for sorted pages. Version 6: autovacuum after 1% of the rows
 * of `entries` and `entry_values` changed (`LARGE_TABLE_STORAGE`). A first start's import is
 * built in bulk (`insertFirstSnapshots`).
 */
export const entriesProjection: Projection<EntryEventType> = {
  name: ENTRIES_PROJECTION,
  version: 6,
  handles: ENTRY_EVENT_TYPES,
  tables: entriesTables,
  indexes: entriesIndexes,
  // What every search of the REST channel and GraphQL reads: built before the others.
  catchUpAlone: true,
  async apply(events, { tx, table }) {
    // Set-wise: only each entry's outcome after the batch is written. An entry deleted in
    // the batch is deleted first, so one added again after it starts afresh (created_at).
    const outcomes = new Map<string, EntryOutcome>();
    for (const event of events) {
      const uuid = event.data.entryUUID;
      const state = stateAfterEvent(event);
      const outcome = outcomes.get(uuid) ?? { deleted: false, first: undefined, last: event };
      outcomes.set(uuid, outcome);
      outcome.last = event;
      if (event.type === ENTRY_EVENT.deleted || !state) {
        outcome.deleted = true;
        outcome.first = undefined;
      } else {
        outcome.first ??= event;
      }
    }
    const deleted = [...outcomes].filter(([, o]) => o.deleted).map(([uuid]) => uuid);
    if (deleted.length > 0) {
      await tx.query(`DELETE FROM ${table("entries")} WHERE entry_uuid = ANY($1::uuid[])`, [
        deleted,
      ]);
    }
    const rows = [...outcomes].flatMap(([uuid, { first, last }]) => {
      const row = first && entryRow(uuid, first, last);
      return row ? [row] : [];
    });
    // Entries whose type and attributes the batch left as they were keep their indexed
    // values as they are (a periodic snapshot of an entry that did not change, say): read in
    // the statement's snapshot, from before its own upsert.
    let unchanged = new Set<string>();
    if (rows.length > 0) {
      const result = await tx.query<{ entry_uuid: string }>(
        `WITH r AS (
           SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(entry_uuid uuid, type text, dn text,
                  dn_norm text, attributes jsonb, operational jsonb, created_at timestamptz,
                  modified_at timestamptz, version bigint, created_position bigint, position bigint, transaction_id xid8)),
              same AS (
           SELECT e.entry_uuid FROM ${table("entries")} AS e JOIN r USING (entry_uuid)
            WHERE e.type IS NOT DISTINCT FROM r.type AND e.attributes = r.attributes
              AND e.operational = r.operational),
              written AS (
           INSERT INTO ${table("entries")} AS e
             (entry_uuid, type, dn, dn_norm, attributes, operational, created_at, modified_at, version, created_position, position, transaction_id)
           SELECT entry_uuid, type, dn, dn_norm, attributes, operational, created_at, modified_at, version, created_position, position, transaction_id
             FROM r
           ON CONFLICT (entry_uuid) DO UPDATE SET
             type = EXCLUDED.type, dn = EXCLUDED.dn, dn_norm = EXCLUDED.dn_norm,
             attributes = EXCLUDED.attributes, operational = EXCLUDED.operational,
             modified_at = EXCLUDED.modified_at, version = EXCLUDED.version,
             position = EXCLUDED.position, transaction_id = EXCLUDED.transaction_id)
         SELECT entry_uuid::text FROM same`,
        [await jsonbParameter(rows)],
      );
      unchanged = new Set(result.rows.map((row) => row.entry_uuid));
    }
    await indexEntryValues(
      tx,
      table,
      [...outcomes.keys()].filter((uuid) => !unchanged.has(uuid)),
    );
  },
  applyFirstSnapshots: insertFirstSnapshots,
  replay: entriesReplay,
};

/** What a batch leaves of one entry. */
interface EntryOutcome {
  /** Deleted at some point in the batch: its row goes first. */
  deleted: boolean;
  /** The first event after the last delete, which makes the entry (undefined: none). */
  first: RecordedOf<EntryEventType> | undefined;
  last: RecordedOf<EntryEventType>;
}
