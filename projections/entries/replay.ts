import { ENTRY_EVENT, type EntryEventType } from "../../src/events/index.ts";
import type { ReplayPlan } from "../../src/projector/index.ts";
import { ENTRY_ROW_COLUMNS, entryRow } from "./row.ts";
import { insertAllEntryValues } from "./values.ts";

const COLUMNS = ENTRY_ROW_COLUMNS;

/** What the events of an entry leave unchanged of a row stored before them (as `apply`). */
const KEPT = ["entry_uuid", "created_at", "created_position"];
const CREATED = ["created_at", "created_position"].map((column) =>
  COLUMNS.indexOf(column as (typeof COLUMNS)[number]),
);

/**
 * The `entries` projection's set-wise replay (`Projection.replay`): each entry's row is worked
 * out in memory from its events (`entryRow`, as `apply` does), written by COPY, and its values
 * indexed once, over every entry, at the end (`insertAllEntryValues`): `entry_values` is a
 * function of `entries` alone, so indexing the final rows gives what indexing them batch after
 * batch gives.
 *
 * A row held is the entry as its last event leaves it, made by the first event after its last
 * delete; an entry whose row was written before keeps the time and position it was made at
 * (the merge leaves them), as `apply`'s upsert keeps them.
 */
export const entriesReplay: ReplayPlan<EntryEventType> = {
  tables: [
    {
      name: "entries",
      columns: COLUMNS,
      key: ["entry_uuid"],
      merge: COLUMNS.filter((column) => !KEPT.includes(column))
        .map((column) => `${column} = EXCLUDED.${column}`)
        .join(", "),
    },
  ],
  fold(events, rows) {
    for (const event of events) {
      const uuid = event.data.entryUUID;
      const row = event.type === ENTRY_EVENT.deleted ? undefined : entryRow(uuid, event, event);
      if (!row) {
        rows.delete("entries", [uuid]);
        continue;
      }
      const values: unknown[] = COLUMNS.map((column) => row[column]);
      const held = rows.get("entries", [uuid]);
      if (held) for (const at of CREATED) values[at] = held[at];
      rows.put("entries", values);
    }
  },
  finish: ({ tx, table }) => insertAllEntryValues(tx, table),
};
