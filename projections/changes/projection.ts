import { ENTRY_CHANGE_TYPES, changeTypeOf, type EntryChangeType } from "../../src/events/index.ts";
import type { Projection } from "../../src/projector/index.ts";
import { CHANGES_PROJECTION, changesTables, changesIndexes, type ChangesRow } from "./tables.ts";
import { jsonbParameter } from "../../src/store/index.ts";

/**
 * `changes`: the change feed. One row per add, modify, rename and delete, in the log's global
 * order (its cursor is the event's log position), with who made it, when it happened and
 * when annal recorded it, the attributes it touched and its RFC 6902 patch.
 */
export const changesProjection: Projection<EntryChangeType> = {
  name: CHANGES_PROJECTION,
  version: 1,
  handles: ENTRY_CHANGE_TYPES,
  tables: changesTables,
  indexes: changesIndexes,
  async apply(events, { tx, table }) {
    const rows = events.map((event): ChangesRow => {
      const change = event.data;
      return {
        transaction_id: event.transactionId,
        position: event.position,
        event_id: event.id,
        entry_uuid: change.entryUUID,
        type: (change.after ?? change.before)?.type ?? null,
        dn: change.dn,
        old_dn: change.oldDn ?? null,
        change_type: changeTypeOf[event.type],
        occurred_at: event.occurredAt,
        recorded_at: event.recordedAt,
        actor: event.metadata.actor ?? null,
        attributes: change.attributes,
        patch: change.patch,
        observed: change.observed ?? false,
        source: event.metadata.source ?? null,
        causation_id: event.metadata.causationId ?? null,
        correlation_id: event.metadata.correlationId ?? null,
      };
    });
    await tx.query(
      `INSERT INTO ${table("changes")}
       SELECT transaction_id::xid8, position, event_id, entry_uuid, type, dn, old_dn, change_type,
              occurred_at, recorded_at, actor, attributes, patch, observed, source, causation_id, correlation_id
         FROM jsonb_to_recordset($1::jsonb) AS r(
              transaction_id text, position bigint, event_id uuid, entry_uuid uuid, type text, dn text,
              old_dn text, change_type text, occurred_at timestamptz, recorded_at timestamptz, actor text,
              attributes text[], patch jsonb, observed boolean, source text, causation_id text,
              correlation_id text)`,
      [await jsonbParameter(rows)],
    );
  },
};
