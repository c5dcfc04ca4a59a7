import { normalizeDN } from "../../src/directory/index.ts";
import {
  ENTRY_EVENT,
  ENTRY_EVENT_TYPES,
  stateAfterEvent,
  type EntryEventType,
} from "../../src/events/index.ts";
import type { Projection } from "../../src/projector/index.ts";
import { operationalTime } from "../entry-events.ts";
import { ENTRIES_PROJECTION, entriesTables } from "./tables.ts";
import { indexEntryValues } from "./values.ts";

/**
 * `entries`: the current state of every entry. Attributes are JSON objects of name → list of
 * values (binary values base64); deleted entries are removed. Beside them, `entry_values` indexes
 * every value case-folded (see `entriesTables`), brought up to date once per batch for the
 * entries the batch touched.
 *
 * Version 2: `entry_values`, `entry_value_counts` and the (type, dn) index.
 */
export const entriesProjection: Projection<EntryEventType> = {
  name: ENTRIES_PROJECTION,
  version: 2,
  handles: ENTRY_EVENT_TYPES,
  tables: entriesTables,
  async apply(events, { tx, table }) {
    const touched = new Set<string>();
    for (const event of events) {
      const uuid = event.data.entryUUID;
      touched.add(uuid);
      const state = stateAfterEvent(event);
      if (event.type === ENTRY_EVENT.deleted || !state) {
        await tx.query(`DELETE FROM ${table("entries")} WHERE entry_uuid = $1`, [uuid]);
        continue;
      }
      const created = operationalTime(state, "createTimestamp") ?? event.occurredAt;
      const modified =
        event.type === ENTRY_EVENT.snapshot
          ? (operationalTime(state, "modifyTimestamp") ?? event.occurredAt)
          : event.occurredAt;
      await tx.query(
        `INSERT INTO ${table("entries")} AS e
           (entry_uuid, type, dn, dn_norm, attributes, operational, created_at, modified_at, version, position, transaction_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (entry_uuid) DO UPDATE SET
           type = EXCLUDED.type, dn = EXCLUDED.dn, dn_norm = EXCLUDED.dn_norm,
           attributes = EXCLUDED.attributes, operational = EXCLUDED.operational,
           modified_at = EXCLUDED.modified_at, version = EXCLUDED.version,
           position = EXCLUDED.position, transaction_id = EXCLUDED.transaction_id`,
        [
          uuid,
          state.type,
          state.dn,
          normalizeDN(state.dn),
          JSON.stringify(state.attributes),
          JSON.stringify(state.operational),
          created,
          modified,
          event.streamVersion,
          event.position,
          event.transactionId,
        ],
      );
    }
    await indexEntryValues(tx, table, [...touched]);
  },
};
