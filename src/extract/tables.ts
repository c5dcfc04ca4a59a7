import type { Queryable } from "../db/index.ts";
import { readCheckpoint, schemaNames } from "../projector/index.ts";
import {
  belowSafeBound,
  logOrder,
  logPositionColumns,
  logPositionCompare,
  logPositionOf,
  START,
  type LogPosition,
  type LogPositionRow,
} from "../store/index.ts";
import { CHANGES, CHANGES_PROJECTION } from "../../projections/changes/index.ts";
import {
  ENTRY_VERSIONS,
  ENTRY_VERSIONS_PROJECTION,
} from "../../projections/entry-versions/index.ts";
import {
  WORKFLOW_INSTANCES,
  WORKFLOW_STEPS,
  WORKFLOWS_PROJECTION,
} from "../../projections/workflows/index.ts";
import type { AttributeColumn } from "./attributes.ts";
import type { ColumnSpec } from "./parquet.ts";

export const TABLE_NAMES = [
  "events",
  "changes",
  "entry_versions",
  "memberships",
  "workflow_instances",
  "workflow_steps",
] as const;

export type TableName = (typeof TABLE_NAMES)[number];

export function isTableName(name: string): name is TableName {
  return (TABLE_NAMES as readonly string[]).includes(name);
}

/**
 * Which rows of a table a query reads: `rows` of an append-only table (events, changes) after
 * a position; of a table whose rows change (versions, memberships, instances and their
 * steps), the rows `closed` (final: their end is known) by an event after a position, or the
 * rows still `open`.
 */
export type RowPart = "rows" | "closed" | "open";

export interface ExtractQuery {
  readonly sql: string;
  readonly params: unknown[];
}

/** What a run knows beyond the table: the typed attribute columns of the versions. */
export interface ExtractContext {
  readonly attributes: readonly AttributeColumn[];
}

export interface ExtractTable {
  readonly name: TableName;
  /** `append`: a row is final when written; `state`: rows are written closed, or open again. */
  readonly shape: "append" | "state";
  columns(context: ExtractContext): ColumnSpec[];
  /**
   * The log position the table's source holds in the reading transaction's snapshot: the
   * projection's checkpoint, or for the events the last one below the safe bound.
   */
  covered(db: Queryable): Promise<LogPosition>;
  /**
   * The rows of `part` after `after` (and up to `upTo`), in a stable order: the table's
   * `columns`, in their order, each in the form its kind reads (`readerFor`: a time as
   * `millis` writes it, a 64-bit integer as its decimal text, a list as a JSON array, JSON as
   * its text).
   */
  query(
    part: RowPart,
    after: LogPosition,
    upTo: LogPosition,
    context: ExtractContext,
  ): ExtractQuery;
}

/**
 * A time as its milliseconds since the epoch, the fraction of a millisecond dropped (as a
 * JavaScript `Date` holds it): what a timestamp column reads, without a parse of the text.
 */
const millis = (expression: string, name: string) =>
  `floor(extract(epoch FROM ${expression}) * 1000)::int8 AS ${name}`;

const isStart = (at: LogPosition) =>
  at.transactionId === START.transactionId && at.position === START.position;

async function checkpointOf(db: Queryable, projection: string): Promise<LogPosition> {
  const checkpoint = await readCheckpoint(db, schemaNames(projection).live);
  return checkpoint
    ? { transactionId: checkpoint.transactionId, position: checkpoint.position }
    : START;
}

/**
 * The entry events after `after` (in log order), as `(entry_uuid, position)`: what a run that
 * continues from `after` has to look at for versions and memberships that closed since, so
 * that its work follows what changed rather than the size of the history.
 */
function entryEventsAfter(after: LogPosition, params: unknown[]): string {
  return `SELECT substr(e.stream_id, 7)::uuid AS entry_uuid, e.position
            FROM events AS e
           WHERE e.stream_id LIKE 'entry-%' AND ${logPositionCompare("e", ">", after, params)}`;
}

const eventsTable: ExtractTable = {
  name: "events",
  shape: "append",
  columns: () => [
    { name: "position", kind: "int64", required: true },
    { name: "transaction_id", kind: "int64", required: true },
    { name: "event_id", kind: "uuid", required: true },
    { name: "stream_id", kind: "string", required: true },
    { name: "stream_version", kind: "int64", required: true },
    { name: "type", kind: "string", required: true },
    { name: "data", kind: "json" },
    { name: "metadata", kind: "json" },
    { name: "occurred_at", kind: "timestamp", required: true },
    { name: "recorded_at", kind: "timestamp", required: true },
  ],
  async covered(db) {
    const last = await db.query<LogPositionRow>(
      `SELECT ${logPositionColumns("e")} FROM events AS e WHERE ${belowSafeBound("e")}
        ORDER BY ${logOrder("e", "backward")} LIMIT 1`,
    );
    return last.rows[0] ? logPositionOf(last.rows[0]) : START;
  },
  query(_part, after, upTo) {
    const params: unknown[] = [];
    return {
      // COPY writes each column as its text (the transaction id as its digits): no cast.
      sql: `SELECT e.position, e.transaction_id, e.id, e.stream_id, e.stream_version,
                   e.type, e.data, e.metadata, ${millis("e.occurred_at", "occurred_at")}, ${millis("e.recorded_at", "recorded_at")}
              FROM events AS e
             WHERE ${logPositionCompare("e", ">", after, params)}
               AND ${logPositionCompare("e", "<=", upTo, params)}
             ORDER BY ${logOrder("e")}`,
      params,
    };
  },
};

const changesTable: ExtractTable = {
  name: "changes",
  shape: "append",
  columns: () => [
    { name: "position", kind: "int64", required: true },
    { name: "transaction_id", kind: "int64", required: true },
    { name: "event_id", kind: "uuid", required: true },
    { name: "entry_uuid", kind: "uuid", required: true },
    { name: "type", kind: "string" },
    { name: "dn", kind: "string", required: true },
    { name: "old_dn", kind: "string" },
    { name: "change_type", kind: "string", required: true },
    { name: "occurred_at", kind: "timestamp", required: true },
    { name: "recorded_at", kind: "timestamp", required: true },
    { name: "actor", kind: "string" },
    { name: "attributes", kind: "string", list: true },
    { name: "patch", kind: "json" },
    { name: "observed", kind: "boolean", required: true },
    { name: "source", kind: "string" },
    { name: "causation_id", kind: "string" },
    { name: "correlation_id", kind: "string" },
  ],
  covered: (db) => checkpointOf(db, CHANGES_PROJECTION),
  query(_part, after) {
    const params: unknown[] = [];
    return {
      sql: `SELECT c.position, c.transaction_id, c.event_id, c.entry_uuid, c.type, c.dn,
                   c.old_dn, c.change_type, ${millis("c.occurred_at", "occurred_at")}, ${millis("c.recorded_at", "recorded_at")},
                   c.actor, to_jsonb(c.attributes), c.patch, c.observed, c.source, c.causation_id,
                   c.correlation_id
              FROM ${CHANGES} AS c
             WHERE ${logPositionCompare("c", ">", after, params)}
             ORDER BY ${logOrder("c")}`,
      params,
    };
  },
};

const entryVersionsTable: ExtractTable = {
  name: "entry_versions",
  shape: "state",
  columns: ({ attributes }) => [
    { name: "entry_uuid", kind: "uuid", required: true },
    { name: "version", kind: "int64", required: true },
    { name: "dn", kind: "string", required: true },
    { name: "type", kind: "string" },
    { name: "valid_from", kind: "timestamp", required: true },
    { name: "valid_to", kind: "timestamp" },
    { name: "position", kind: "int64", required: true },
    ...attributes,
    { name: "attributes_other", kind: "json" },
    { name: "operational", kind: "json" },
  ],
  covered: (db) => checkpointOf(db, ENTRY_VERSIONS_PROJECTION),
  query(part, after, _upTo, { attributes }) {
    const params: unknown[] = [];
    const parameter = (value: unknown) => `$${params.push(value)}`;
    // A version of a configured type (`type` not null): each attribute with a column of its
    // own there (a list: the version's array; single-valued: its first value), the rest as
    // JSON; a version of no configured type: every attribute as JSON. Null when none.
    const typed = attributes.map(
      ({ attribute, list }) =>
        `CASE WHEN v.type IS NOT NULL
              THEN v.attributes->${parameter(attribute)}${list ? "" : "->>0"} END`,
    );
    const named = parameter(attributes.map(({ attribute }) => attribute));
    const columns = [
      "v.entry_uuid",
      "v.version",
      "v.dn",
      "v.type",
      millis("v.valid_from", "valid_from"),
      millis("v.valid_to", "valid_to"),
      "v.position",
      ...typed,
      `NULLIF(CASE WHEN v.type IS NULL THEN v.attributes
                   ELSE v.attributes - ${named}::text[] END, '{}'::jsonb)`,
      "NULLIF(v.operational, '{}'::jsonb)",
    ].join(", ");
    // A version is closed by the next version of its entry (a change, or the delete); the
    // delete itself is no version of the entry's life and is not extracted. A first run takes
    // every closed version; a later one those whose next version's event came after `after`.
    if (part === "open" || isStart(after)) {
      return {
        sql: `SELECT ${columns} FROM ${ENTRY_VERSIONS} AS v
               WHERE NOT v.deleted AND v.valid_to IS ${part === "open" ? "NULL" : "NOT NULL"}
               ORDER BY v.entry_uuid, v.version`,
        params,
      };
    }
    return {
      sql: `WITH closing AS (${entryEventsAfter(after, params)})
            SELECT ${columns}
              FROM closing
              JOIN ${ENTRY_VERSIONS} AS n ON n.entry_uuid = closing.entry_uuid
                                         AND n.position = closing.position
              CROSS JOIN LATERAL (SELECT p.* FROM ${ENTRY_VERSIONS} AS p
                                   WHERE p.entry_uuid = n.entry_uuid AND p.version < n.version
                                   ORDER BY p.version DESC LIMIT 1) AS v
             WHERE NOT v.deleted AND v.valid_to IS NOT NULL
             ORDER BY v.entry_uuid, v.version`,
      params,
    };
  },
};

/**
 * Each stretch of time a group listed a member (`member` or `uniqueMember`, compared without
 * regard to case), over the group's versions: an island of consecutive versions holding the
 * value. It starts with the first version of the island and ends where the last one ends
 * (null: still a member); `closing_position` is the event of the version that ended it.
 */
const membershipSpans = (touched: string | undefined) => `
  WITH groups AS (
    SELECT DISTINCT g.entry_uuid FROM ${ENTRY_VERSIONS} AS g
     WHERE g.attributes ?| array['member', 'uniqueMember']
       ${touched === undefined ? "" : `AND g.entry_uuid IN (SELECT entry_uuid FROM (${touched}) AS t)`}),
  versions AS (
    SELECT v.entry_uuid, v.version, v.dn, v.type, v.valid_from, v.valid_to, v.deleted,
           v.position, v.attributes,
           row_number() OVER (PARTITION BY v.entry_uuid ORDER BY v.version) AS n,
           lead(v.position) OVER (PARTITION BY v.entry_uuid ORDER BY v.version) AS next_position
      FROM ${ENTRY_VERSIONS} AS v JOIN groups USING (entry_uuid)),
  held AS (
    SELECT versions.*, m.member, lower(m.member) AS member_key
      FROM versions
      CROSS JOIN LATERAL (
        SELECT DISTINCT ON (lower(value)) value AS member
          FROM jsonb_array_elements_text(
                 coalesce(versions.attributes->'member', '[]'::jsonb)
                 || coalesce(versions.attributes->'uniqueMember', '[]'::jsonb)) AS value
         ORDER BY lower(value)) AS m
     WHERE NOT versions.deleted),
  islands AS (
    SELECT held.*,
           held.n - row_number() OVER (PARTITION BY held.entry_uuid, held.member_key
                                       ORDER BY held.version) AS island
      FROM held)
  SELECT islands.entry_uuid AS group_uuid,
         (array_agg(islands.dn ORDER BY islands.version DESC))[1] AS group_dn,
         (array_agg(islands.type ORDER BY islands.version DESC))[1] AS group_type,
         (array_agg(islands.member ORDER BY islands.version))[1] AS member_dn,
         min(islands.valid_from) AS valid_from,
         (array_agg(islands.valid_to ORDER BY islands.version DESC))[1] AS valid_to,
         (array_agg(islands.position ORDER BY islands.version))[1] AS opening_position,
         (array_agg(islands.next_position ORDER BY islands.version DESC))[1] AS closing_position
    FROM islands
   GROUP BY islands.entry_uuid, islands.member_key, islands.island`;

const membershipsTable: ExtractTable = {
  name: "memberships",
  shape: "state",
  columns: () => [
    { name: "group_uuid", kind: "uuid", required: true },
    { name: "group_dn", kind: "string", required: true },
    { name: "group_type", kind: "string" },
    { name: "member_dn", kind: "string", required: true },
    { name: "valid_from", kind: "timestamp", required: true },
    { name: "valid_to", kind: "timestamp" },
    { name: "opening_position", kind: "int64", required: true },
    { name: "closing_position", kind: "int64" },
  ],
  covered: (db) => checkpointOf(db, ENTRY_VERSIONS_PROJECTION),
  query(part, after) {
    const params: unknown[] = [];
    // A later run's closed spans: those of the groups changed since `after`, ended by one
    // of those changes.
    const touched =
      part === "closed" && !isStart(after) ? entryEventsAfter(after, params) : undefined;
    const where =
      part === "open"
        ? "s.valid_to IS NULL"
        : touched === undefined
          ? "s.valid_to IS NOT NULL"
          : `s.valid_to IS NOT NULL AND s.closing_position IN (SELECT position FROM (${touched}) AS c)`;
    return {
      sql: `SELECT s.group_uuid, s.group_dn, s.group_type, s.member_dn, ${millis("s.valid_from", "valid_from")},
                   ${millis("s.valid_to", "valid_to")}, s.opening_position, s.closing_position
              FROM (${membershipSpans(touched)}) AS s WHERE ${where}
             ORDER BY s.group_uuid, lower(s.member_dn), s.valid_from`,
      params,
    };
  },
};

/** An instance that can change no more: completed or cancelled (an errored one may be retried). */
const FINISHED = "i.status IN ('COMPLETED', 'CANCELLED')";

function instancesWhere(part: RowPart, after: LogPosition, params: unknown[]): string {
  return part === "open"
    ? `NOT (${FINISHED})`
    : `${FINISHED} AND ${logPositionCompare("i", ">", after, params)}`;
}

const workflowInstancesTable: ExtractTable = {
  name: "workflow_instances",
  shape: "state",
  columns: () => [
    { name: "instance_id", kind: "uuid", required: true },
    { name: "definition", kind: "string", required: true },
    { name: "version", kind: "int32", required: true },
    { name: "hash", kind: "string", required: true },
    { name: "status", kind: "string", required: true },
    { name: "started_by_id", kind: "string", required: true },
    { name: "started_by", kind: "string", required: true },
    { name: "started_at", kind: "timestamp", required: true },
    { name: "updated_at", kind: "timestamp", required: true },
    { name: "until", kind: "timestamp" },
    { name: "parent_id", kind: "uuid" },
    { name: "parameters", kind: "json" },
    { name: "result", kind: "json" },
    { name: "error", kind: "json" },
    { name: "position", kind: "int64", required: true },
  ],
  covered: (db) => checkpointOf(db, WORKFLOWS_PROJECTION),
  query(part, after) {
    const params: unknown[] = [];
    return {
      sql: `SELECT i.instance_id, i.definition, i.version, i.hash, i.status, i.started_by_id,
                   i.started_by, ${millis("i.started_at", "started_at")}, ${millis("i.updated_at", "updated_at")},
                   ${millis("i.until", "until")}, i.parent_id, i.parameters, i.result, i.error, i.position
              FROM ${WORKFLOW_INSTANCES} AS i
             WHERE ${instancesWhere(part, after, params)}
             ORDER BY i.started_at, i.instance_id`,
      params,
    };
  },
};

const workflowStepsTable: ExtractTable = {
  name: "workflow_steps",
  shape: "state",
  columns: () => [
    { name: "instance_id", kind: "uuid", required: true },
    { name: "seq", kind: "int32", required: true },
    { name: "kind", kind: "string", required: true },
    { name: "name", kind: "string", required: true },
    { name: "state", kind: "string", required: true },
    { name: "attempts", kind: "int32" },
    { name: "started_at", kind: "timestamp", required: true },
    { name: "ended_at", kind: "timestamp" },
    { name: "result", kind: "json" },
    { name: "error", kind: "json" },
    { name: "child_id", kind: "uuid" },
  ],
  covered: (db) => checkpointOf(db, WORKFLOWS_PROJECTION),
  // An instance's steps are written with it: closed once it finished, open again until then.
  query(part, after) {
    const params: unknown[] = [];
    return {
      sql: `SELECT s.instance_id, s.seq, s.kind, s.name, s.state, s.attempts,
                   ${millis("s.started_at", "started_at")}, ${millis("s.ended_at", "ended_at")}, s.result, s.error, s.child_id
              FROM ${WORKFLOW_STEPS} AS s JOIN ${WORKFLOW_INSTANCES} AS i USING (instance_id)
             WHERE ${instancesWhere(part, after, params)}
             ORDER BY i.started_at, s.instance_id, s.seq`,
      params,
    };
  },
};

export const EXTRACT_TABLES: Readonly<Record<TableName, ExtractTable>> = {
  events: eventsTable,
  changes: changesTable,
  entry_versions: entryVersionsTable,
  memberships: membershipsTable,
  workflow_instances: workflowInstancesTable,
  workflow_steps: workflowStepsTable,
};
