import {
  ENTRY_EVENT,
  ENTRY_EVENT_TYPES,
  sameAttributes,
  stateAfterEvent,
  type EntryEventType,
} from "../../src/events/index.ts";
import type { Projection } from "../../src/projector/index.ts";
import { VALUE_KEY_LENGTH } from "../entries/index.ts";
import { versionValueRows } from "./values.ts";
import {
  ENTRY_VERSIONS_PROJECTION,
  entryVersionsTables,
  entryVersionsIndexes,
  type EntryVersionsRow,
} from "./tables.ts";

/**
 * `entry_versions`: every version of every entry with its validity interval on `occurred_at`
 * (when the directory says the change happened). The version valid at a moment is the one
 * with the latest `valid_from` not after it: one probe of the (entry_uuid, valid_from) index.
 * A delete is a version too (`deleted`), so "not there at that moment" is answered with why.
 * A snapshot that finds the entry as the log already has it adds no version. A batch costs
 * three statements whatever its size.
 *
 * Beside them, `entry_version_values` indexes every value of every version (see
 * `entryVersionsTables`), written with the versions and ended with them.
 */
export const entryVersionsProjection: Projection<EntryEventType> = {
  name: ENTRY_VERSIONS_PROJECTION,
  // 2: the index of searches at a moment; a start rebuilds the table side by side with it.
  // 3: `entry_version_values`, the versions' value index.
  version: 3,
  handles: ENTRY_EVENT_TYPES,
  tables: entryVersionsTables,
  indexes: entryVersionsIndexes,
  async apply(events, { tx, table }) {
    // Set-wise: the entries' open versions are read at once, the batch is worked out here,
    // then one UPDATE closes the open versions it ended and one INSERT adds its versions.
    const uuids = [...new Set(events.map((event) => event.data.entryUUID))];
    const open = await tx.query<OpenVersion & { entry_uuid: string }>(
      `SELECT entry_uuid, version, valid_from, dn, type, attributes, operational, deleted
         FROM ${table("entry_versions")}
        WHERE entry_uuid = ANY($1::uuid[]) AND valid_to IS NULL`,
      [uuids],
    );
    const current = new Map<string, OpenVersion>(open.rows.map((row) => [row.entry_uuid, row]));
    /** Stored versions this batch ends: entry → the version and its valid_to. */
    const closed = new Map<string, { version: number; validTo: Date }>();
    const added: NewVersion[] = [];
    /** Each entry's version added last in this batch (its valid_to set when another follows). */
    const latest = new Map<string, NewVersion>();
    for (const event of events) {
      const uuid = event.data.entryUUID;
      const before = current.get(uuid);
      const state = stateAfterEvent(event);
      const deleted = event.type === ENTRY_EVENT.deleted || !state;
      if (event.type === ENTRY_EVENT.snapshot && before && !before.deleted && state) {
        const same =
          before.dn === state.dn &&
          before.type === state.type &&
          sameAttributes(before.attributes, state.attributes);
        if (same) continue;
      }
      // A checkpoint stands for the version valid at the retention horizon, as it started.
      const since = event.type === ENTRY_EVENT.checkpointed ? event.data.since : undefined;
      const occurredAt = since ? new Date(since.occurredAt) : event.occurredAt;
      // Versions never overlap: a change reported with an earlier time than the version it
      // follows (clocks of different sources) starts where that version started.
      const validFrom = before && before.valid_from > occurredAt ? before.valid_from : occurredAt;
      if (before) {
        const previous = latest.get(uuid);
        if (previous) previous.valid_to = validFrom;
        else closed.set(uuid, { version: before.version, validTo: validFrom });
      }
      const shown = state ?? before ?? since;
      const version: NewVersion = {
        entry_uuid: uuid,
        version: since?.version ?? event.streamVersion,
        valid_from: validFrom,
        valid_to: null,
        deleted,
        type: shown?.type ?? null,
        dn: shown?.dn ?? "",
        attributes: deleted || !state ? {} : state.attributes,
        operational: deleted || !state ? {} : state.operational,
        position: since?.position ?? event.position,
      };
      added.push(version);
      latest.set(uuid, version);
      current.set(uuid, version);
    }
    if (closed.size > 0) {
      const ends = [...closed.values()];
      await tx.query(
        `WITH c AS (SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::timestamptz[])
                      AS c(entry_uuid, version, valid_to)),
              versions AS (UPDATE ${table("entry_versions")} AS v SET valid_to = c.valid_to
                             FROM c WHERE v.entry_uuid = c.entry_uuid AND v.valid_to IS NULL)
         UPDATE ${table("entry_version_values")} AS x SET valid_to = c.valid_to
           FROM c WHERE x.entry_uuid = c.entry_uuid AND x.version = c.version`,
        [[...closed.keys()], ends.map((end) => end.version), ends.map((end) => end.validTo)],
      );
    }
    if (added.length > 0) {
      await tx.query(
        `WITH r AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(entry_uuid uuid,
                      version bigint, valid_from timestamptz, valid_to timestamptz,
                      deleted boolean, type text, dn text, attributes jsonb, operational jsonb,
                      position bigint)),
              versions AS (INSERT INTO ${table("entry_versions")}
                 (entry_uuid, version, valid_from, valid_to, deleted, type, dn, attributes, operational, position)
               SELECT entry_uuid, version, valid_from, valid_to, deleted, type, dn, attributes, operational, position
                 FROM r)
         INSERT INTO ${table("entry_version_values")}
           (entry_uuid, version, type, attribute, ordinal, value_key, value_folded, valid_from, valid_to)
         ${versionValueRows("r", "$2")}`,
        [JSON.stringify(added), VALUE_KEY_LENGTH],
      );
    }
  },
};

/** The fields of an entry's open version that the next event is compared with. */
type OpenVersion = Pick<
  EntryVersionsRow,
  "version" | "valid_from" | "dn" | "type" | "attributes" | "operational" | "deleted"
>;

/** A version this batch adds; its end is known when a later event of the batch follows it. */
type NewVersion = Omit<EntryVersionsRow, "valid_to"> & { valid_to: Date | null };
