import {
  ENTRY_EVENT,
  ENTRY_EVENT_TYPES,
  sameAttributes,
  stateAfterEvent,
  type EntryEventType,
} from "../../src/events/index.ts";
import type { Projection } from "../../src/projector/index.ts";
import { ENTRY_VERSIONS_PROJECTION, entryVersionsTables, type EntryVersionsRow } from "./tables.ts";

/**
 * `entry_versions`: every version of every entry with its validity interval on `occurred_at`
 * (when the directory says the change happened). The version valid at a moment is the one
 * with the latest `valid_from` not after it: one probe of the (entry_uuid, valid_from) index.
 * A delete is a version too (`deleted`), so "not there at that moment" is answered with why.
 * A snapshot that finds the entry as the log already has it adds no version.
 */
export const entryVersionsProjection: Projection<EntryEventType> = {
  name: ENTRY_VERSIONS_PROJECTION,
  version: 1,
  handles: ENTRY_EVENT_TYPES,
  tables: entryVersionsTables,
  async apply(events, { tx, table }) {
    for (const event of events) {
      const uuid = event.data.entryUUID;
      const open = await tx.query<
        Pick<
          EntryVersionsRow,
          "valid_from" | "dn" | "type" | "attributes" | "operational" | "deleted"
        >
      >(
        `SELECT valid_from, dn, type, attributes, operational, deleted FROM ${table("entry_versions")}
          WHERE entry_uuid = $1 AND valid_to IS NULL`,
        [uuid],
      );
      const current = open.rows[0];
      const state = stateAfterEvent(event);
      const deleted = event.type === ENTRY_EVENT.deleted || !state;
      if (event.type === ENTRY_EVENT.snapshot && current && !current.deleted && state) {
        const same =
          current.dn === state.dn &&
          current.type === state.type &&
          sameAttributes(current.attributes, state.attributes);
        if (same) continue;
      }
      // Versions never overlap: a change reported with an earlier time than the version it
      // follows (clocks of different sources) starts where that version started.
      const validFrom =
        current && current.valid_from > event.occurredAt ? current.valid_from : event.occurredAt;
      if (current) {
        await tx.query(
          `UPDATE ${table("entry_versions")} SET valid_to = $2 WHERE entry_uuid = $1 AND valid_to IS NULL`,
          [uuid, validFrom],
        );
      }
      const shown =
        state ??
        (current && {
          dn: current.dn,
          type: current.type,
          attributes: current.attributes,
          operational: current.operational,
        });
      await tx.query(
        `INSERT INTO ${table("entry_versions")}
           (entry_uuid, version, valid_from, deleted, type, dn, attributes, operational, position)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          uuid,
          event.streamVersion,
          validFrom,
          deleted,
          shown?.type ?? null,
          shown?.dn ?? "",
          JSON.stringify(deleted ? {} : (shown?.attributes ?? {})),
          JSON.stringify(deleted ? {} : (shown?.operational ?? {})),
          event.position,
        ],
      );
    }
  },
};
