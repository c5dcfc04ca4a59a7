import {
  ENTRY_EVENT,
  ENTRY_EVENT_TYPES,
  sameAttributes,
  stateAfterEvent,
  type EntryEventType,
} from "../../src/events/index.ts";
import type { Projection } from "../../src/projector/index.ts";
import { VALUE_KEY_LENGTH } from "../entries/index.ts";
import { VALUE_SPAN_COLUMNS, onlyVersionValueSpanRows, valueSpanRows } from "./values.ts";
import {
  ENTRY_VERSIONS_PROJECTION,
  entryVersionsTables,
  entryVersionsIndexes,
  type EntryVersionsRow,
} from "./tables.ts";
import { jsonbParameter } from "../../src/store/index.ts";

/**
 * `entry_versions`: every version of every entry with its validity interval on `occurred_at`
 * (when the directory says the change happened). The version valid at a moment is the one
 * with the latest `valid_from` not after it: one probe of the (entry_uuid, valid_from) index.
 * A delete is a version too (`deleted`), so "not there at that moment" is answered with why.
 * A snapshot that finds the entry as the log already has it adds no version. A batch costs
 * three statements whatever its size.
 *
 * Beside them, `entry_version_values` indexes the spans of every value of the versions (see
 * `entryVersionsTables`): a value's span is continued by a version that holds it too and ended
 * by the first that does not.
 */
export const entryVersionsProjection: Projection<EntryEventType> = {
  name: ENTRY_VERSIONS_PROJECTION,
  // 2: the index of searches at a moment; a start rebuilds the table side by side with it.
  // 3: `entry_version_values`, the versions' value index.
  // 4: its rows are spans of unchanged values instead of one per value of each version.
  // 5: `created_position` on every version, so a search at a moment reads the entries' order.
  // 6: the index of creation order, and the spans' match index in entry order within a value,
  //    so a page of a search at a moment (GraphQL's `@at`, REST's `at`) stops with the page.
  // 7: autovacuum after 1% of the rows changed or appended (`LARGE_TABLE_STORAGE`).
  version: 7,
  handles: ENTRY_EVENT_TYPES,
  tables: entryVersionsTables,
  indexes: entryVersionsIndexes,
  async apply(events, { tx, table }) {
    // Set-wise: the entries' open versions are read at once, the batch is worked out here,
    // then one UPDATE closes the open versions it ended and one statement adds its versions
    // and their values' spans.
    const uuids = [...new Set(events.map((event) => event.data.entryUUID))];
    // An open version's attributes are compared with a snapshot's only (one that finds the
    // entry as it was adds no version): read for the entries the batch snapshots, not for a
    // change to a group of 100,000 members, whose 5.6 MB were parsed in one piece.
    const snapshotted = [
      ...new Set(
        events.filter((e) => e.type === ENTRY_EVENT.snapshot).map((e) => e.data.entryUUID),
      ),
    ];
    const open = await tx.query<OpenVersion & { entry_uuid: string }>(
      `SELECT entry_uuid, version, valid_from, dn, type, deleted, created_position,
              CASE WHEN entry_uuid = ANY($2::uuid[]) THEN attributes END AS attributes,
              CASE WHEN entry_uuid = ANY($2::uuid[]) THEN operational END AS operational
         FROM ${table("entry_versions")}
        WHERE entry_uuid = ANY($1::uuid[]) AND valid_to IS NULL`,
      [uuids, snapshotted],
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
        created_position: before?.created_position ?? since?.position ?? event.position,
      };
      added.push(version);
      latest.set(uuid, version);
      current.set(uuid, version);
    }
    if (closed.size > 0) {
      const ends = [...closed.values()];
      await tx.query(
        `UPDATE ${table("entry_versions")} AS v SET valid_to = c.valid_to
           FROM unnest($1::uuid[], $2::timestamptz[]) AS c(entry_uuid, valid_to)
          WHERE v.entry_uuid = c.entry_uuid AND v.valid_to IS NULL`,
        [[...closed.keys()], ends.map((end) => end.validTo)],
      );
    }
    if (added.length > 0) {
      // The batch's value spans (`valueSpanRows`) meet the spans the entries' stored open
      // versions left open: a span that starts with an entry's first new version and holds
      // the same value continues the open one (which takes its end); every other open span
      // of the entry ends where the first new version starts. One statement sees the table
      // as it was before it, so the open spans are read once, before any is ended.
      //
      // The spans are matched by hash joins only (an anti join for the spans continued):
      // planned from the table's statistics, which count few open spans an entry, the open
      // spans were matched by entry alone (a merge join, the rest a filter) and each of the
      // batch's spans looked up among them one by one (a subplan under NOT), so a one-member
      // change to a group of 10,000 members compared every span with every other and took
      // 88 s (100,000: hours). The settings are put back after the statement.
      //
      // Only for a batch that holds an entry of many values: without nested loops the entries'
      // open spans are found by reading every open span of the table (a hash join cannot look
      // them up by entry), and a batch of a few people's changes took 6 to 10 s at 100,000
      // entries, a core of the machine's two for as long as changes came (bench/RESULTS.md,
      // capture lag through REST). Looked up by `entry_version_values_open`, a few ms.
      const hashJoins = added.some((version) => valueCount(version) >= HASH_JOINS_FROM_VALUES);
      if (hashJoins) {
        await tx.query("SET LOCAL enable_nestloop = off; SET LOCAL enable_mergejoin = off");
      }
      await tx.query(
        `WITH r AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(entry_uuid uuid,
                      version bigint, valid_from timestamptz, valid_to timestamptz,
                      deleted boolean, type text, dn text, attributes jsonb, operational jsonb,
                      position bigint, created_position bigint)),
              versions AS (INSERT INTO ${table("entry_versions")}
                 (entry_uuid, version, valid_from, valid_to, deleted, type, dn, attributes, operational, position, created_position)
               SELECT entry_uuid, version, valid_from, valid_to, deleted, type, dn, attributes, operational, position, created_position
                 FROM r),
              spans AS (${valueSpanRows("r", "$2")}),
              starts AS (SELECT entry_uuid, min(valid_from) AS start FROM r GROUP BY entry_uuid),
              open AS (SELECT x.ctid AS row, x.entry_uuid, x.type, x.attribute, x.value_key,
                              x.value_folded, s.start, n.entry_uuid IS NOT NULL AS continued,
                              n.valid_to AS continued_to
                         FROM ${table("entry_version_values")} AS x
                         JOIN starts AS s ON s.entry_uuid = x.entry_uuid
                         LEFT JOIN spans AS n ON n.first AND n.entry_uuid = x.entry_uuid
                          AND n.type = x.type AND n.attribute = x.attribute
                          AND n.value_key = x.value_key
                          AND n.value_folded IS NOT DISTINCT FROM x.value_folded
                        WHERE x.valid_to IS NULL),
              ended AS (UPDATE ${table("entry_version_values")} AS x
                           SET valid_to = CASE WHEN o.continued THEN o.continued_to ELSE o.start END
                          FROM open AS o
                         WHERE x.ctid = o.row AND NOT (o.continued AND o.continued_to IS NULL))
         INSERT INTO ${table("entry_version_values")} (${VALUE_SPAN_COLUMNS})
         SELECT ${VALUE_SPAN_COLUMNS} FROM spans AS n
          WHERE NOT EXISTS (SELECT 1 FROM open AS o
                 WHERE n.first AND o.continued AND o.entry_uuid = n.entry_uuid
                   AND o.type = n.type AND o.attribute = n.attribute
                   AND o.value_key = n.value_key
                   AND o.value_folded IS NOT DISTINCT FROM n.value_folded)`,
        [await jsonbParameter(added), VALUE_KEY_LENGTH],
      );
      if (hashJoins) await tx.query("RESET enable_nestloop; RESET enable_mergejoin");
    }
  },
  // A first snapshot opens its entry's first version and its values' spans, from the moment it
  // was taken, as `apply` does for an entry it has no version of (the times cut to milliseconds, as events read
  // into JS are). Each entry has this one version, so its spans need no islands (a third of
  // the statement's time at 10,000 entries went to their sorts: bench/RESULTS.md).
  async applyFirstSnapshots(run, { tx, table }) {
    const params: unknown[] = [];
    const from = run.from(params);
    params.push(VALUE_KEY_LENGTH);
    await tx.query(
      `WITH r AS MATERIALIZED (
         SELECT (e.data->>'entryUUID')::uuid AS entry_uuid, e.stream_version AS version,
                date_trunc('milliseconds', e.occurred_at) AS valid_from,
                NULL::timestamptz AS valid_to, false AS deleted, e.data->'state'->>'type' AS type,
                coalesce(e.data->'state'->>'dn', '') AS dn,
                e.data->'state'->'attributes' AS attributes,
                e.data->'state'->'operational' AS operational, e.position
           FROM ${from}),
            versions AS (INSERT INTO ${table("entry_versions")}
               (entry_uuid, version, valid_from, valid_to, deleted, type, dn, attributes, operational, position, created_position)
             SELECT entry_uuid, version, valid_from, valid_to, deleted, type, dn, attributes, operational, position, position
               FROM r)
       INSERT INTO ${table("entry_version_values")} (${VALUE_SPAN_COLUMNS})
       ${onlyVersionValueSpanRows("r", `$${params.length}`)}`,
      params,
    );
  },
};

/** The fields of an entry's open version that the next event is compared with. */
type OpenVersion = Pick<
  EntryVersionsRow,
  | "version"
  | "valid_from"
  | "dn"
  | "type"
  | "attributes"
  | "operational"
  | "deleted"
  | "created_position"
>;

/** A version this batch adds; its end is known when a later event of the batch follows it. */
type NewVersion = Omit<EntryVersionsRow, "valid_to"> & { valid_to: Date | null };

/**
 * From how many values a version's entry is matched by hash joins only (`apply`): the square
 * of a person's few dozen values is nothing; a group of 10,000 members' took 88 s.
 */
const HASH_JOINS_FROM_VALUES = 1_000;

/** How many values a version holds, its operational attributes' included. */
function valueCount(version: NewVersion): number {
  let count = 0;
  for (const values of [
    ...Object.values(version.attributes),
    ...Object.values(version.operational),
  ]) {
    count += Array.isArray(values) ? values.length : 1;
  }
  return count;
}
