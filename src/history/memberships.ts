import type { Queryable } from "../db/index.ts";
import { normalizeDN, parseDN, rdnOf } from "../directory/index.ts";
import { ENTRY_VERSIONS } from "../../projections/entry-versions/index.ts";
import { clip, mergeSpans, type Period, type Span } from "./during.ts";

/** The attributes whose values name a group's members by DN. */
export const MEMBER_ATTRIBUTES = ["member", "uniqueMember"] as const;

/** How deep groups nest at most before the walk stops (a cycle stops sooner). */
export const MAX_NESTING = 16;

/** A group an entry belonged to during a period, and when. */
export interface Membership {
  readonly groupUUID: string;
  /** The group's type and DN in the last stretch it held the member. */
  readonly type: string | null;
  readonly dn: string;
  /** When the entry was a member, directly or through nested groups, clipped to the period. */
  readonly spans: readonly MembershipSpan[];
  /** Whether some of it was as a direct member (the group named the entry's own DN). */
  readonly direct: boolean;
  /** The DNs of the groups through which it was a member (members of this group), if any. */
  readonly via: readonly string[];
}

/**
 * A stretch of a membership within the period. `ongoing`: it went on past `to` (or `to` is
 * null), so `to` is where the period ends, not when the entry left the group.
 */
export interface MembershipSpan extends Span {
  readonly ongoing: boolean;
}

/** A DN held over a span: the entry's own, or a group's reached from it. */
interface Holder {
  readonly dn: string;
  readonly span: Span;
  /** The group this holder is (undefined: the entry itself). */
  readonly group?: string;
}

interface GroupVersion {
  readonly entry_uuid: string;
  readonly type: string | null;
  readonly dn: string;
  readonly members: string[];
  readonly valid_from: Date;
  readonly valid_to: Date | null;
}

/**
 * The groups `entryUUID` belonged to during the period, each with the stretches of it, from
 * `entry_versions` alone: a group's version that lists a DN the entry had at the same time
 * (renames followed) makes it a member for the overlap, and a group that lists such a group
 * passes the membership on, level by level, for the overlap of both. Each level is one query
 * over the versions whose member values contain one of the level's RDN values, compared
 * normalised afterwards (`normalizeDN`: any spelling of a DN). The walk stops when a level
 * adds no time to any group (cycles end there) or after `MAX_NESTING` levels.
 *
 * @example
 * // Every group Alice was in during Q3, and when (nested groups included):
 * await membershipsDuring(pool, alice, { start: july1, end: october1 });
 */
export async function membershipsDuring(
  db: Queryable,
  entryUUID: string,
  period: Period,
): Promise<Membership[]> {
  // The walk reads the versions up to the period's end included and clips only their start:
  // whether a membership went on past the end is known only from what holds at the end.
  const reach: Period = { start: period.start, end: undefined };
  const own = await db.query<{ dn: string; valid_from: Date; valid_to: Date | null }>(
    `SELECT dn, valid_from, valid_to FROM ${ENTRY_VERSIONS} AS v
      WHERE entry_uuid = $1 AND NOT deleted ${overlaps(period, [entryUUID])}`,
    [entryUUID, ...bounds(period)],
  );
  let holders: Holder[] = own.rows.map((row) => ({
    dn: normal(row.dn) ?? row.dn,
    span: clip({ from: row.valid_from, to: row.valid_to }, reach),
  }));
  const found = new Map<
    string,
    {
      type: string | null;
      dn: string;
      last: Date | undefined;
      spans: Span[];
      direct: boolean;
      via: Set<string>;
    }
  >();
  for (let level = 0; level < MAX_NESTING && holders.length > 0; level++) {
    const versions = await groupVersions(db, holders, period);
    const reached = new Map<string, Holder[]>();
    for (const version of versions) {
      const listed = new Set(version.members.map(normal));
      const validity = clip({ from: version.valid_from, to: version.valid_to }, reach);
      for (const holder of holders) {
        if (!listed.has(holder.dn) || holder.group === version.entry_uuid) continue;
        const span = intersect(holder.span, validity);
        if (!span) continue;
        const group = found.get(version.entry_uuid) ?? {
          type: version.type,
          dn: version.dn,
          last: undefined,
          spans: [],
          direct: false,
          via: new Set<string>(),
        };
        // What begins at the period's end only tells whether a membership went on past it.
        if (period.end === undefined || span.from < period.end) {
          if (group.last === undefined || span.from >= group.last)
            Object.assign(group, { dn: version.dn, type: version.type, last: span.from });
          if (holder.group === undefined) group.direct = true;
          else group.via.add(found.get(holder.group)?.dn ?? holder.dn);
        }
        found.set(version.entry_uuid, group);
        const next = reached.get(version.entry_uuid) ?? [];
        next.push({ dn: normal(version.dn) ?? version.dn, span, group: version.entry_uuid });
        reached.set(version.entry_uuid, next);
      }
    }
    // Only time a group did not have yet passes on: a cycle adds none and ends the walk.
    holders = [];
    for (const [uuid, added] of reached) {
      const group = found.get(uuid)!;
      const before = JSON.stringify(group.spans);
      group.spans = mergeSpans([...group.spans, ...added.map((holder) => holder.span)]);
      if (JSON.stringify(group.spans) !== before) holders.push(...added);
    }
  }
  return [...found.entries()]
    .map(([groupUUID, group]) => ({
      groupUUID,
      type: group.type,
      dn: group.dn,
      spans: endAt(group.spans, period.end),
      direct: group.direct,
      via: [...group.via].sort(),
    }))
    .filter((membership) => membership.spans.length > 0)
    .sort((a, b) => a.dn.localeCompare(b.dn) || a.groupUUID.localeCompare(b.groupUUID));
}

/** Spans cut at `end`, each saying whether it went on past it. */
function endAt(spans: readonly Span[], end: Date | undefined): MembershipSpan[] {
  return spans
    .filter((span) => end === undefined || span.from < end)
    .map((span) => {
      const ongoing = span.to === null || (end !== undefined && span.to > end);
      return { from: span.from, to: ongoing && end !== undefined ? end : span.to, ongoing };
    });
}

/** The versions overlapping the period whose member values may name one of the holders. */
async function groupVersions(
  db: Queryable,
  holders: readonly Holder[],
  period: Period,
): Promise<GroupVersion[]> {
  const rdnValues = [
    ...new Set(
      holders.map((holder) => (parseDN(rdnOf(holder.dn))[0]?.[0]?.value ?? "").toLowerCase()),
    ),
  ];
  const params: unknown[] = [[...MEMBER_ATTRIBUTES], rdnValues, ...bounds(period)];
  const result = await db.query<GroupVersion>(
    `SELECT v.entry_uuid, v.type, v.dn, v.valid_from, v.valid_to,
            array(SELECT m.value FROM unnest($1::text[]) AS a(name),
                  jsonb_array_elements_text(coalesce(v.attributes -> a.name, '[]'::jsonb)) AS m(value)) AS members
       FROM ${ENTRY_VERSIONS} AS v
      WHERE NOT v.deleted ${overlaps(period, [null, null])}
        AND EXISTS (SELECT 1 FROM unnest($1::text[]) AS a(name),
              jsonb_array_elements_text(coalesce(v.attributes -> a.name, '[]'::jsonb)) AS m(value),
              unnest($2::text[]) AS r(value)
             WHERE strpos(lower(m.value), r.value) > 0)`,
    params,
  );
  return result.rows;
}

/** The period's bounds as parameters, after `before` others (see `overlaps`). */
function bounds(period: Period): Date[] {
  return [period.start, period.end].filter((moment) => moment !== undefined);
}

/**
 * `AND` conditions that a version `v` overlaps the period or begins at its end, with the period's bounds bound
 * after `before` parameters (in the order of `bounds`); a version that ended the moment it
 * began overlaps nothing.
 */
function overlaps(period: Period, before: readonly unknown[]): string {
  let next = before.length;
  const conditions = ["AND v.valid_from < coalesce(v.valid_to, 'infinity'::timestamptz)"];
  if (period.start) {
    conditions.push(`AND coalesce(v.valid_to, 'infinity'::timestamptz) > $${++next}::timestamptz`);
  }
  // The end is included: a version that begins there tells whether a membership went on.
  if (period.end) conditions.push(`AND v.valid_from <= $${++next}::timestamptz`);
  return conditions.join(" ");
}

/** Where two spans overlap; undefined when they do not. */
function intersect(a: Span, b: Span): Span | undefined {
  const from = a.from > b.from ? a.from : b.from;
  const to = a.to === null ? b.to : b.to === null ? a.to : a.to < b.to ? a.to : b.to;
  return to !== null && to <= from ? undefined : { from, to };
}

/** A DN normalised, or undefined for a value that is no DN. */
function normal(dn: string): string | undefined {
  try {
    return normalizeDN(parseDN(dn));
  } catch {
    return undefined;
  }
}
