import { createHash } from "node:crypto";
import type { Queryable } from "../db/index.ts";
import { matchesFilter, normalizeDN } from "../directory/index.ts";
import type { AttributeMap, ReviewItem } from "../events/index.ts";
import { parseLdapFilter } from "../filters/index.ts";
import { CAUSE_COLUMNS, CAUSE_JOIN, causeOf, versionsAt, type CauseRow } from "../history/index.ts";
import { ACCESS_TABLES } from "../../projections/access/index.ts";
import { CHANGES } from "../../projections/changes/index.ts";
import { ENTRY_VERSIONS } from "../../projections/entry-versions/index.ts";
import { REVIEW_ITEMS } from "../../projections/reviews/index.ts";
import type { ReviewDefinition } from "./definition.ts";

const MEMBER_ATTRIBUTES = ["member", "uniqueMember"] as const;

/** The items a campaign of `definition` has at `at`, and the members nobody could review. */
export interface ReviewItems {
  readonly items: ReviewItem[];
  readonly unreviewable: { group: string; member: string }[];
}

interface VersionRow {
  readonly entry_uuid: string;
  readonly dn: string;
  readonly attributes: AttributeMap;
}

/**
 * The items of a campaign of `definition` as the directory was at `at`, from the history
 * projections (`entry_versions`, `changes`, the Access Configuration's activations): each
 * member of each group in scope, with who reviews it, when its membership began and what made
 * it (the change's cause), and the last campaign's decision on it. Read at a past moment, it is
 * what `annal simulate review` shows; at the campaign's start, what the campaign records.
 *
 * @example
 * const { items } = await reviewItemsAt(pool, definition, new Date());
 */
export async function reviewItemsAt(
  db: Queryable,
  definition: ReviewDefinition,
  at: Date,
): Promise<ReviewItems> {
  const groups = new Map<string, { row: VersionRow; accessFunction: string | null }>();
  if (definition.scope.groups !== undefined) {
    for (const row of await groupsMatching(
      db,
      definition.scope.groups,
      definition.scope.base,
      at,
    )) {
      groups.set(row.entry_uuid, { row, accessFunction: null });
    }
  }
  const fn = definition.scope.accessFunction;
  if (fn !== undefined) {
    for (const row of await groupsGranted(db, fn, at)) {
      groups.set(row.entry_uuid, { row, accessFunction: fn });
    }
  }
  const memberships: {
    group: VersionRow;
    accessFunction: string | null;
    attribute: string;
    dn: string;
  }[] = [];
  for (const { row, accessFunction } of [...groups.values()].sort((a, b) =>
    a.row.dn.localeCompare(b.row.dn),
  )) {
    for (const attribute of MEMBER_ATTRIBUTES) {
      for (const dn of valuesOf(row.attributes, attribute)) {
        memberships.push({ group: row, accessFunction, attribute, dn });
      }
    }
  }
  const members = await entriesByDn(
    db,
    memberships.map((m) => m.dn),
    at,
  );
  const items: ReviewItem[] = [];
  const unreviewable: { group: string; member: string }[] = [];
  const reviewed: (typeof memberships)[number][] = [];
  const reviewersOfItem: string[][] = [];
  for (const m of memberships) {
    const reviewers = reviewersOf(definition, m.group, members.get(norm(m.dn)));
    if (reviewers.length === 0) {
      unreviewable.push({ group: m.group.dn, member: m.dn });
      continue;
    }
    reviewed.push(m);
    reviewersOfItem.push(reviewers);
  }
  // Each read in a constant number of statements (or one a group), not one an item.
  const histories = await membershipHistories(db, reviewed, at);
  const lastReviews = await lastReviewsOf(db, reviewed, at);
  for (const [index, m] of reviewed.entries()) {
    const member = members.get(norm(m.dn));
    const reviewers = reviewersOfItem[index]!;
    const history = histories[index]!;
    items.push({
      itemId: itemIdOf(m.group.entry_uuid, m.attribute, m.dn),
      kind: m.accessFunction === null ? "membership" : "grant",
      groupUUID: m.group.entry_uuid,
      groupDn: m.group.dn,
      memberUUID: member?.entry_uuid ?? null,
      memberDn: m.dn,
      attribute: m.attribute,
      accessFunction: m.accessFunction,
      reviewers,
      since: history.since,
      began: history.began,
      lastReview: lastReviews[index]!,
    });
  }
  return { items, unreviewable };
}

/** An item's id: stable for one membership, so campaigns can be compared item by item. */
function itemIdOf(groupUUID: string, attribute: string, memberDn: string): string {
  return createHash("sha256")
    .update(`${groupUUID}\n${attribute}\n${norm(memberDn)}`)
    .digest("hex")
    .slice(0, 24);
}

function norm(dn: string): string {
  try {
    return normalizeDN(dn);
  } catch {
    return dn.toLowerCase();
  }
}

function valuesOf(attributes: AttributeMap, name: string): string[] {
  const key = Object.keys(attributes).find((k) => k.toLowerCase() === name.toLowerCase());
  const values = key === undefined ? [] : (attributes[key] ?? []);
  return (Array.isArray(values) ? values : [values]).map(String);
}

/** The reviewers of one membership as the definition names them, or its fallback. */
function reviewersOf(
  definition: ReviewDefinition,
  group: VersionRow,
  member: VersionRow | undefined,
): string[] {
  const { by, managerAttribute, fallback } = definition.reviewers;
  const found =
    by === "owner"
      ? valuesOf(group.attributes, "owner")
      : by === "manager"
        ? member
          ? valuesOf(member.attributes, managerAttribute)
          : []
        : [definition.reviewers.group!];
  const named = found.filter((dn) => dn !== "");
  if (named.length > 0) return named;
  return fallback === undefined ? [] : [fallback];
}

/**
 * The entries as they were at `at` that list members and match the filter, under `base`. The
 * filter is matched in memory on each candidate (`matchesFilter`, as the directory compares),
 * so it reads typed and untyped entries alike.
 */
async function groupsMatching(
  db: Queryable,
  filterText: string,
  base: string | undefined,
  at: Date,
): Promise<VersionRow[]> {
  const filter = parseLdapFilter(filterText);
  const params: unknown[] = [at, [...MEMBER_ATTRIBUTES]];
  const rows = await db.query<VersionRow>(
    `SELECT e.entry_uuid, e.dn, e.attributes FROM ${versionsAt({ at: "$1", params })}
      WHERE e.attributes ?| $2::text[]`,
    params,
  );
  const under = base === undefined ? undefined : norm(base);
  return rows.rows.filter((row) => {
    const dn = norm(row.dn);
    if (under !== undefined && dn !== under && !dn.endsWith(`,${under}`)) return false;
    return matchesFilter(filter, row.attributes as Record<string, readonly string[]>);
  });
}

/** The groups the Access Configuration active at `at` grants `fn` to. */
async function groupsGranted(db: Queryable, fn: string, at: Date): Promise<VersionRow[]> {
  const active = await db.query<{ grants: Record<string, string[]> }>(
    `SELECT grants FROM ${ACCESS_TABLES.activations}
      WHERE valid_from <= $1 AND (valid_to IS NULL OR valid_to > $1)
      ORDER BY valid_from DESC LIMIT 1`,
    [at],
  );
  const principals = active.rows[0]?.grants[fn] ?? [];
  const found = await entriesByDn(
    db,
    principals.filter((p) => p.includes("=")),
    at,
  );
  return [...found.values()];
}

/** The entries as they were at `at` whose DNs are among `dns`, by normalised DN. */
async function entriesByDn(
  db: Queryable,
  dns: readonly string[],
  at: Date,
): Promise<Map<string, VersionRow>> {
  const found = new Map<string, VersionRow>();
  if (dns.length === 0) return found;
  const lowered = [...new Set(dns.map((dn) => dn.toLowerCase()))];
  const params: unknown[] = [at, lowered];
  const rows = await db.query<VersionRow>(
    `SELECT e.entry_uuid, e.dn, e.attributes FROM ${versionsAt({ at: "$1", params })}
      WHERE e.dn_norm = ANY($2::text[])`,
    params,
  );
  for (const row of rows.rows) found.set(norm(row.dn), row);
  return found;
}

type Began = ReviewItem["began"];

/**
 * When each member's current stretch in its group began (the first of the group's versions,
 * walking back from `at`, that lists it without a break) and the change that made it: its log
 * position and its cause (`import` for the first snapshot of a history, `directory` for a write
 * annal did not make, else the cause the change feed names). One read of each group's versions
 * for all its members, one of the changes for all of them; answers in the order of
 * `memberships`.
 */
async function membershipHistories(
  db: Queryable,
  memberships: readonly { group: VersionRow; attribute: string; dn: string }[],
  at: Date,
): Promise<{ since: string; began: Began }[]> {
  /** Per group and attribute: its versions at `at`, the latest first, members normalised. */
  const versionsOf = new Map<
    string,
    { valid_from: Date; position: string; deleted: boolean; members: Set<string> }[]
  >();
  for (const { group, attribute } of memberships) {
    const key = `${group.entry_uuid}\n${attribute}`;
    if (versionsOf.has(key)) continue;
    const versions = await db.query<{
      valid_from: Date;
      position: string;
      deleted: boolean;
      members: string[];
    }>(
      `SELECT v.valid_from, v.position, v.deleted,
              ARRAY(SELECT jsonb_array_elements_text(coalesce(v.attributes -> $3, '[]'::jsonb))) AS members
         FROM ${ENTRY_VERSIONS} AS v
        WHERE v.entry_uuid = $1 AND v.valid_from <= $2
        ORDER BY v.version DESC`,
      [group.entry_uuid, at, attribute],
    );
    versionsOf.set(
      key,
      versions.rows.map((v) => ({ ...v, members: new Set(v.members.map(norm)) })),
    );
  }
  const firsts = memberships.map(({ group, attribute, dn }) => {
    const wanted = norm(dn);
    let first: { valid_from: Date; position: string } | undefined;
    for (const version of versionsOf.get(`${group.entry_uuid}\n${attribute}`)!) {
      if (version.deleted || !version.members.has(wanted)) break;
      first = version;
    }
    return first;
  });
  const positions = [...new Set(firsts.flatMap((first) => (first ? [first.position] : [])))];
  const changes = new Map<
    string,
    CauseRow & { position: string; actor: string | null; source: string | null }
  >();
  for (let from = 0; from < positions.length; from += 10_000) {
    const found = await db.query<
      CauseRow & { position: string; actor: string | null; source: string | null }
    >(
      `SELECT c.position, c.actor, c.source, ${CAUSE_COLUMNS}
         FROM ${CHANGES} AS c ${CAUSE_JOIN}
        WHERE c.position = ANY($1::bigint[])`,
      [positions.slice(from, from + 10_000)],
    );
    for (const row of found.rows) {
      if (!changes.has(String(row.position))) changes.set(String(row.position), row);
    }
  }
  return firsts.map((first) => {
    if (!first) {
      return {
        since: at.toISOString(),
        began: { position: null, kind: "unknown", by: null, workflow: null, instanceId: null },
      };
    }
    const row = changes.get(String(first.position));
    const position = Number(first.position);
    const since = first.valid_from.toISOString();
    if (!row) {
      // No change at that position: the first snapshot of the history (an import).
      return {
        since,
        began: { position, kind: "import", by: null, workflow: null, instanceId: null },
      };
    }
    return { since, began: beganBy(row, position) };
  });
}

/** How a change began a membership, by its cause. */
function beganBy(row: CauseRow & { actor: string | null }, position: number): Began {
  const cause = causeOf(row);
  return cause === null
    ? { position, kind: "directory", by: row.actor, workflow: null, instanceId: null }
    : cause.kind === "workflow"
      ? {
          position,
          kind: "workflow",
          by: cause.approvedBy?.name ?? row.actor,
          workflow: cause.workflow,
          instanceId: cause.instanceId,
        }
      : cause.kind === "mutation"
        ? { position, kind: "mutation", by: cause.account, workflow: null, instanceId: null }
        : cause.kind === "changeEvent"
          ? { position, kind: "changeEvent", by: cause.source, workflow: null, instanceId: null }
          : { position, kind: "event", by: row.actor, workflow: null, instanceId: null };
}

/**
 * The last decision a reviewer took on each membership before `at`, in one statement; answers
 * in the order of `memberships`. An item nobody decided (kept or revoked at its deadline, as the
 * definition says) is no review.
 */
async function lastReviewsOf(
  db: Queryable,
  memberships: readonly { group: VersionRow; dn: string }[],
  at: Date,
): Promise<ReviewItem["lastReview"][]> {
  const keyOf = (groupUUID: string, memberNorm: string) => `${groupUUID}\n${memberNorm}`;
  const found = await db.query<{
    group_uuid: string;
    member_norm: string;
    campaign_id: string;
    decision: string;
    decided_at: Date;
    decided_by: { name?: string } | null;
  }>(
    `SELECT DISTINCT ON (i.group_uuid, i.member_norm)
            i.group_uuid, i.member_norm, i.campaign_id, i.decision, i.decided_at, i.decided_by
       FROM ${REVIEW_ITEMS} AS i
       JOIN unnest($1::uuid[], $2::text[]) AS m(group_uuid, member_norm)
         ON i.group_uuid = m.group_uuid AND i.member_norm = m.member_norm
      WHERE i.state = 'decided' AND i.decided_at <= $3
      ORDER BY i.group_uuid, i.member_norm, i.decided_at DESC`,
    [memberships.map((m) => m.group.entry_uuid), memberships.map((m) => m.dn.toLowerCase()), at],
  );
  const last = new Map(found.rows.map((row) => [keyOf(row.group_uuid, row.member_norm), row]));
  return memberships.map((m) => {
    const row = last.get(keyOf(m.group.entry_uuid, m.dn.toLowerCase()));
    if (!row) return null;
    return {
      campaignId: row.campaign_id,
      decision: row.decision,
      decidedAt: row.decided_at.toISOString(),
      by: row.decided_by?.name ?? null,
    };
  });
}
