import type { Queryable } from "../db/index.ts";
import type { AttributeMap } from "../events/index.ts";
import { compileFilterToIndexedSql, type FilterNode } from "../filters/index.ts";
import { VALUE_KEY_LENGTH } from "../../projections/entries/index.ts";
import { ENTRY_VERSION_VALUES, ENTRY_VERSIONS } from "../../projections/entry-versions/index.ts";

/** A period: `[start, end)`, each side open when undefined. */
export interface Period {
  readonly start: Date | undefined;
  readonly end: Date | undefined;
}

/** A stretch of time in which something held: from `from`, until `to` (null: still holds). */
export interface Span {
  readonly from: Date;
  readonly to: Date | null;
}

/** An entry that matched a filter during a period, with when, and its last matching state. */
export interface MatchedEntry {
  readonly entryUUID: string;
  readonly dn: string;
  readonly attributes: AttributeMap;
  readonly operational: AttributeMap;
  /** The sub-intervals of the period in which it matched, in order, never touching. */
  readonly spans: readonly Span[];
}

export interface DuringQuery {
  readonly type: string;
  /** The filter with canonical names (`checkAttributes`). */
  readonly filter: FilterNode;
  readonly period: Period;
}

export interface DuringPage {
  readonly direction: "forward" | "backward";
  readonly limit: number;
  /** The entryUUID the page starts after (forward) or before (backward). */
  readonly position?: string;
}

/**
 * The SQL of the versions of a type that overlap the period and match the filter, as `m`
 * with the version's columns, binding to `params`. A version overlaps `[start, end)` when it
 * begins before the end and ends after the start; a deletion matches nothing, and a version
 * that ended the moment it began held at no moment. The filter reads the spans of the
 * versions' values (`entry_version_values`), bounded to the spans valid in the period.
 */
function matchingVersions(query: DuringQuery, params: unknown[]): string {
  const bind = (value: unknown) => `$${params.push(value)}`;
  const type = bind(query.type);
  const conditions = [
    `v.type = ${type}`,
    "NOT v.deleted",
    "v.valid_from < coalesce(v.valid_to, 'infinity'::timestamptz)",
  ];
  const { start, end } = query.period;
  const endParam = end && bind(end);
  const startParam = start && bind(start);
  if (endParam) conditions.push(`v.valid_from < ${endParam}::timestamptz`);
  if (startParam)
    conditions.push(`coalesce(v.valid_to, 'infinity'::timestamptz) > ${startParam}::timestamptz`);
  const filter = compileFilterToIndexedSql(query.filter, {
    valuesTable: ENTRY_VERSION_VALUES,
    entryColumn: "v.entry_uuid",
    typeParam: type,
    keyLength: VALUE_KEY_LENGTH,
    params,
    spans: {
      from: startParam,
      to: endParam,
      versionsTable: ENTRY_VERSIONS,
      versionColumn: "v.version",
      validFromColumn: "v.valid_from",
    },
  });
  return `SELECT v.* FROM ${ENTRY_VERSIONS} AS v WHERE ${conditions.join(" AND ")} AND ${filter}`;
}

/**
 * A page of the entries of a type that matched `filter` at some moment of the period, in
 * entryUUID order (keyset: a page never repeats or skips an entry), each with the
 * sub-intervals in which it matched, clipped to the period, and its state in the last of them.
 * Two queries whatever the page's size: the page's entries, then their matching versions.
 *
 * @example
 * // Everyone who was in on-call during March, and when:
 * await matchedDuring(pool, { type: "user", filter, period: { start: march1, end: april1 } },
 *   { direction: "forward", limit: 50 });
 */
export async function matchedDuring(
  db: Queryable,
  query: DuringQuery,
  page: DuringPage,
): Promise<{ entries: MatchedEntry[]; more: boolean; behind: boolean }> {
  const forward = page.direction === "forward";
  const uuids = await entryUUIDsBeyond(db, query, forward, page.limit + 1, page.position);
  const more = uuids.length > page.limit;
  const chosen = uuids.slice(0, page.limit);
  if (!forward) chosen.reverse();
  const behind =
    page.position !== undefined &&
    (await entryUUIDsBeyond(db, query, !forward, 1, page.position, true)).length > 0;
  if (chosen.length === 0) return { entries: [], more, behind };
  const params: unknown[] = [];
  const versions = matchingVersions(query, params);
  const result = await db.query<VersionRow>(
    `SELECT m.entry_uuid, m.dn, m.attributes, m.operational, m.valid_from, m.valid_to
       FROM (${versions}) AS m WHERE m.entry_uuid = ANY($${params.push(chosen)}::uuid[])
      ORDER BY m.entry_uuid, m.valid_from, m.version`,
    params,
  );
  const byEntry = new Map<string, VersionRow[]>();
  for (const row of result.rows) {
    const rows = byEntry.get(row.entry_uuid) ?? [];
    rows.push(row);
    byEntry.set(row.entry_uuid, rows);
  }
  const entries = chosen.flatMap((uuid) => {
    const rows = byEntry.get(uuid);
    const last = rows?.at(-1);
    if (!rows || !last) return [];
    return [
      {
        entryUUID: uuid,
        dn: last.dn,
        attributes: last.attributes,
        operational: last.operational,
        spans: mergeSpans(
          rows.map((row) => clip({ from: row.valid_from, to: row.valid_to }, query.period)),
        ),
      },
    ];
  });
  return { entries, more, behind };
}

/** How many entries of the type matched the filter at some moment of the period. */
export async function countMatchedDuring(db: Queryable, query: DuringQuery): Promise<number> {
  const params: unknown[] = [];
  const result = await db.query<{ count: number }>(
    `SELECT count(DISTINCT m.entry_uuid)::int AS count FROM (${matchingVersions(query, params)}) AS m`,
    params,
  );
  return result.rows[0]?.count ?? 0;
}

interface VersionRow {
  readonly entry_uuid: string;
  readonly dn: string;
  readonly attributes: AttributeMap;
  readonly operational: AttributeMap;
  readonly valid_from: Date;
  readonly valid_to: Date | null;
}

/** Up to `limit` matching entryUUIDs beyond `position` (or at it, `inclusive`), that way. */
async function entryUUIDsBeyond(
  db: Queryable,
  query: DuringQuery,
  forward: boolean,
  limit: number,
  position: string | undefined,
  inclusive = false,
): Promise<string[]> {
  const params: unknown[] = [];
  const versions = matchingVersions(query, params);
  const operator = (forward ? ">" : "<") + (inclusive ? "=" : "");
  const bound =
    position === undefined ? "" : `WHERE m.entry_uuid ${operator} $${params.push(position)}::uuid`;
  const result = await db.query<{ entry_uuid: string }>(
    `SELECT DISTINCT m.entry_uuid FROM (${versions}) AS m ${bound}
      ORDER BY m.entry_uuid ${forward ? "ASC" : "DESC"} LIMIT $${params.push(limit)}`,
    params,
  );
  return result.rows.map((row) => row.entry_uuid);
}

/** A span cut to the period: it starts no earlier than the period, ends no later. */
export function clip(span: Span, period: Period): Span {
  const from = period.start && period.start > span.from ? period.start : span.from;
  const to = period.end && (span.to === null || period.end < span.to) ? period.end : span.to;
  return { from, to };
}

/**
 * Spans in order of their start, merged where one begins before or where the previous ends:
 * a change that kept the match (a phone number edited) does not break the stretch.
 */
export function mergeSpans(spans: readonly Span[]): Span[] {
  const sorted = [...spans].sort((a, b) => a.from.getTime() - b.from.getTime());
  const merged: Span[] = [];
  for (const span of sorted) {
    const previous = merged.at(-1);
    if (previous && (previous.to === null || previous.to >= span.from)) {
      const to =
        previous.to === null || span.to === null
          ? null
          : previous.to > span.to
            ? previous.to
            : span.to;
      merged[merged.length - 1] = { from: previous.from, to };
    } else {
      merged.push(span);
    }
  }
  return merged;
}
