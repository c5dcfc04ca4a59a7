import type { Operation } from "rfc6902";
import type { Queryable } from "../db/index.ts";
import type { ChangeType } from "../events/index.ts";
import {
  logOrder,
  logPositionColumns,
  logPositionCompare,
  logPositionOf,
  type LogPosition,
  type LogPositionRow,
} from "../store/index.ts";
import { CAUSE_COLUMNS, CAUSE_JOIN, causeOf, type CauseRow, type ChangeCause } from "./cause.ts";
import { CHANGES, type ChangesRow } from "../../projections/changes/index.ts";

/** One recorded change of an entry, from the `changes` projection. */
export interface ChangeRecord extends LogPosition {
  readonly eventId: string;
  readonly entryUUID: string;
  /** The entry's configured type (after the change; before it for a delete); null for none. */
  readonly entryType: string | null;
  readonly dn: string;
  /** For a rename: the DN before it. */
  readonly oldDn: string | null;
  readonly changeType: ChangeType;
  /** When the directory says it happened. */
  readonly occurredAt: Date;
  /** When annal recorded it. */
  readonly recordedAt: Date;
  readonly actor: string | null;
  /** The user attributes it touched (redacted ones by name only). */
  readonly attributes: readonly string[];
  /** Why it was made, when annal made it: the change event or mutation behind it. */
  readonly cause: ChangeCause | null;
  /** RFC 6902 patch of the user attributes; present when asked for. */
  readonly patch?: readonly Operation[];
}

/** Which changes: every condition given must hold. */
export interface ChangeFilter {
  /** Changes of this entry only. */
  readonly entryUUID?: string;
  /** Of these kinds only. */
  readonly types?: readonly ChangeType[];
  /** Of entries of these configured types only (`user`). */
  readonly entryTypes?: readonly string[];
  /** Whose actor (the DN the directory names) contains this, case-insensitively. */
  readonly actor?: string;
  /** Touching at least one of these attributes (canonical names). */
  readonly affects?: readonly string[];
  /** `occurred_at` at or after this. */
  readonly from?: Date;
  /** `occurred_at` before this. */
  readonly to?: Date;
  /**
   * Whose patch adds this value (compared case-insensitively) to an attribute: to one of
   * `affects` when given. A person's group memberships are the `member` changes adding their DN.
   */
  readonly adds?: string;
  /** Caused by an event of this stream (a workflow instance's steps: its stream). */
  readonly causeStream?: string;
}

/**
 * A page request in log order: `forward` reads the oldest `limit` changes after `after`,
 * `backward` the newest `limit` before `before`. Pages come back oldest first either way.
 */
export interface ChangePage {
  readonly direction: "forward" | "backward";
  readonly limit: number;
  readonly after?: LogPosition;
  readonly before?: LogPosition;
  /** Read the patch column too. */
  readonly withPatch?: boolean;
}

export interface ChangePageResult {
  readonly changes: readonly ChangeRecord[];
  /** More changes lie beyond the page in its direction. */
  readonly more: boolean;
  /** Changes matching the filter lie on the other side of the cursor the page started from. */
  readonly behind: boolean;
}

interface ChangeRow
  extends
    LogPositionRow,
    CauseRow,
    Pick<
      ChangesRow,
      | "event_id"
      | "entry_uuid"
      | "type"
      | "dn"
      | "old_dn"
      | "change_type"
      | "occurred_at"
      | "recorded_at"
      | "actor"
      | "attributes"
    > {
  readonly patch?: ChangesRow["patch"];
}

function where(filter: ChangeFilter, params: unknown[]): string[] {
  const bind = (value: unknown) => `$${params.push(value)}`;
  const conditions: string[] = [];
  if (filter.entryUUID !== undefined) conditions.push(`c.entry_uuid = ${bind(filter.entryUUID)}`);
  if (filter.types !== undefined) {
    conditions.push(`c.change_type = ANY(${bind(filter.types)}::text[])`);
  }
  if (filter.entryTypes !== undefined) {
    conditions.push(`c.type = ANY(${bind(filter.entryTypes)}::text[])`);
  }
  if (filter.actor !== undefined) {
    // The needle's own % and _ match themselves.
    const needle = filter.actor.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
    conditions.push(`lower(c.actor) LIKE ${bind(`%${needle}%`)}`);
  }
  if (filter.affects !== undefined) {
    conditions.push(`c.attributes && ${bind(filter.affects)}::text[]`);
  }
  if (filter.adds !== undefined) {
    // An add or replace of the attribute (`/member/-`, `/member/3`, `/member`) whose value, or
    // one of whose values, is the one asked for.
    const value = bind(filter.adds.toLowerCase());
    const attribute =
      filter.affects === undefined
        ? ""
        : `AND split_part(op->>'path', '/', 2) = ANY(${bind(filter.affects)}::text[])`;
    conditions.push(
      `EXISTS (SELECT 1 FROM jsonb_array_elements(c.patch) AS op
                WHERE op->>'op' IN ('add', 'replace') ${attribute}
                  AND CASE jsonb_typeof(op->'value')
                        WHEN 'array' THEN EXISTS (
                          SELECT 1 FROM jsonb_array_elements_text(op->'value') AS v
                           WHERE lower(v) = ${value})
                        ELSE lower(op->>'value') = ${value}
                      END)`,
    );
  }
  if (filter.from !== undefined) conditions.push(`c.occurred_at >= ${bind(filter.from)}`);
  if (filter.to !== undefined) conditions.push(`c.occurred_at < ${bind(filter.to)}`);
  if (filter.causeStream !== undefined) {
    conditions.push(
      `c.causation_id IN (SELECT s.id::text FROM events AS s WHERE s.stream_id = ${bind(filter.causeStream)})`,
    );
  }
  return conditions;
}

/**
 * A page of the change feed (`changeFeed`) or of one entry's changes (`filter.entryUUID`,
 * see `changesOf`), in log order: the order the changes were recorded in, which the projection
 * applies them in (so no change can later appear before one already read).
 */
export async function changeFeed(
  db: Queryable,
  filter: ChangeFilter,
  page: ChangePage,
): Promise<ChangePageResult> {
  const params: unknown[] = [];
  const conditions = where(filter, params);
  const forward = page.direction === "forward";
  const cursor = forward ? page.after : page.before;
  const rowConditions = [...conditions];
  if (cursor) rowConditions.push(logPositionCompare("c", forward ? ">" : "<", cursor, params));
  params.push(page.limit + 1);
  const result = await db.query<ChangeRow>(
    `SELECT ${logPositionColumns("c")}, c.event_id, c.entry_uuid, c.type, c.dn, c.old_dn,
            c.change_type, c.occurred_at, c.recorded_at, c.actor, c.attributes, ${CAUSE_COLUMNS}
            ${page.withPatch ? ", c.patch" : ""}
       FROM ${CHANGES} AS c ${CAUSE_JOIN}
      ${rowConditions.length > 0 ? `WHERE ${rowConditions.join(" AND ")}` : ""}
      ORDER BY ${logOrder("c", page.direction)}
      LIMIT $${params.length}`,
    params,
  );
  const rows = result.rows.slice(0, page.limit);
  if (!forward) rows.reverse();
  let behind = false;
  if (cursor) {
    const behindParams: unknown[] = [];
    const behindConditions = where(filter, behindParams);
    behindConditions.push(logPositionCompare("c", forward ? "<=" : ">=", cursor, behindParams));
    const exists = await db.query<{ found: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${CHANGES} AS c WHERE ${behindConditions.join(" AND ")}) AS found`,
      behindParams,
    );
    behind = exists.rows[0]?.found ?? false;
  }
  return { changes: rows.map(toChange), more: result.rows.length > page.limit, behind };
}

/** One entry's changes: `changeFeed` restricted to `entryUUID`. */
export function changesOf(
  db: Queryable,
  entryUUID: string,
  filter: Omit<ChangeFilter, "entryUUID">,
  page: ChangePage,
): Promise<ChangePageResult> {
  return changeFeed(db, { ...filter, entryUUID }, page);
}

/** How many changes match, without reading them. */
export async function countChanges(db: Queryable, filter: ChangeFilter): Promise<number> {
  const params: unknown[] = [];
  const conditions = where(filter, params);
  const result = await db.query<{ count: number }>(
    `SELECT count(*)::bigint AS count FROM ${CHANGES} AS c
      ${conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : ""}`,
    params,
  );
  return result.rows[0]?.count ?? 0;
}

function toChange(row: ChangeRow): ChangeRecord {
  return {
    ...logPositionOf(row),
    eventId: row.event_id,
    entryUUID: row.entry_uuid,
    entryType: row.type,
    dn: row.dn,
    oldDn: row.old_dn,
    changeType: row.change_type,
    occurredAt: row.occurred_at,
    recordedAt: row.recorded_at,
    actor: row.actor,
    attributes: row.attributes,
    cause: causeOf(row),
    ...(row.patch === undefined ? {} : { patch: row.patch }),
  };
}
