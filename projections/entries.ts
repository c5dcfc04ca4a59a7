import { normalizeDN } from "../src/directory/index.ts";
import { ENTRY_EVENT } from "../src/directory/capture/events.ts";
import type { Projection } from "../src/projector/index.ts";
import { ENTRY_EVENT_TYPES, entryUUIDOf, operationalTime, stateAfter } from "./entry-events.ts";

/**
 * `entries`: the current state of every entry. Attributes are JSON objects of name → list of
 * values (binary values base64); deleted entries are removed.
 */
export const entriesProjection: Projection = {
  name: "entries",
  version: 1,
  handles: ENTRY_EVENT_TYPES,
  tables: (table) => [
    `CREATE TABLE ${table("entries")} (
       entry_uuid uuid PRIMARY KEY,
       type text,
       dn text NOT NULL,
       dn_norm text NOT NULL,
       attributes jsonb NOT NULL,
       operational jsonb NOT NULL,
       created_at timestamptz NOT NULL,
       modified_at timestamptz NOT NULL,
       version bigint NOT NULL,
       position bigint NOT NULL,
       transaction_id xid8 NOT NULL)`,
    `CREATE INDEX ON ${table("entries")} (type, entry_uuid)`,
    `CREATE INDEX ON ${table("entries")} (dn_norm)`,
    `CREATE INDEX ON ${table("entries")} USING gin (attributes jsonb_path_ops)`,
  ],
  async apply(events, { tx, table }) {
    for (const event of events) {
      const uuid = entryUUIDOf(event);
      const state = stateAfter(event);
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
  },
};
