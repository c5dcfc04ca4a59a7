/**
 * The demo's past access reviews (ops/demo/annal.toml's `[[reviews]]` "quarterly-groups": the
 * members of identity-team and finance, reviewed by each group's owner): last quarter's
 * campaign, started by the review schedule when annal first ran (the seeded past's first
 * morning) and finished (every item decided by the owners, most kept, two revoked with their
 * reasons, one left undecided past the deadline and kept as the review says); and this
 * quarter's, started four days ago (or on the quarter's first day, when that is later), where
 * finance's owner has decided a few and the rest is open. The campaigns are not written by
 * hand: the history runs them through annal's own start, decisions and item workflow
 * (`EnactReviews`, the real engine on a moved clock), and the revocations' writes come back as
 * changes caused by the revoking steps, as capture records them.
 */
import type { EntryState, ReviewItem } from "../events/index.ts";
import type { StreamAppend } from "../store/index.ts";
import type { Actor } from "../workflow/index.ts";
import type { PastEvent } from "./timeline.ts";

const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;
/** The review the demo's past campaigns are of (ops/demo/annal.toml). */
export const DEMO_REVIEW = "quarterly-groups";
/** The groups it reviews, as its scope names them. */
const REVIEWED = ["identity-team", "finance"] as const;

/** A reviewer's decision on an item, at a moment. */
export interface PlannedDecision {
  readonly at: Date;
  readonly itemId: string;
  readonly as: Actor;
  readonly decision: "keep" | "revoke";
  readonly reason?: string;
}

/** One past campaign, as `EnactReviews` takes it. */
export interface CampaignPlan {
  readonly at: Date;
  /** `schedule`: the review schedule's campaign of the quarter `at` lies in; or by hand. */
  readonly startedBy: "schedule" | Actor;
  readonly decide: (items: readonly ReviewItem[]) => PlannedDecision[];
}

/** A membership a past campaign revokes: held from the seeded past's start until then. */
export interface PlannedRevocation {
  readonly group: string;
  readonly member: string;
  readonly reason: string;
}

/** A write a revoking step made, as the enactment noted it. */
export interface EnactedRevocation {
  readonly instanceId: string;
  readonly stepEvent: string;
  readonly write: {
    readonly operation: string;
    readonly dn: string;
    readonly as: string | null;
    readonly at: string;
    readonly values?: Readonly<Record<string, { readonly removed?: readonly string[] }>>;
  };
}

/** The past as the clock passes it, and where a step's write joins it. */
export interface PastHistoryFeed {
  until(moment: Date): readonly { readonly at: Date; readonly batch: readonly StreamAppend[] }[];
  written(write: EnactedRevocation): void;
}

/**
 * Runs the plans with annal's review start, decisions and item workflow over the history
 * `history` gives; answers the events to append, the timers of the items still open, and the
 * history's events by their positions in the log the items were read from. The app gives the
 * simulator's `enactPastReviews` (a later layer than the demo's).
 */
export type EnactReviews = (
  plans: readonly CampaignPlan[],
  history: PastHistoryFeed,
) => Promise<{
  readonly events: readonly PastEvent[];
  readonly timers: readonly { instanceId: string; dueAt: Date; reason: string }[];
  readonly historyIds: ReadonlyMap<number, string>;
}>;

const REASONS = {
  "identity-team": "Moved to the platform team in the summer; no longer on the identity services",
  finance: "Helped with the annual accounts as a stand-in; that is over",
} as const;

/**
 * The campaigns, and the memberships they revoke: for each reviewed group, a person who is not
 * in it today and not in the rest of the story (`taken`), who held it in the seeded past until
 * last quarter's campaign removed it.
 */
export function reviewStory(
  states: ReadonlyMap<string, EntryState>,
  taken: Set<string>,
  now: Date,
  start: Date,
): { plans: CampaignPlan[]; revoked: PlannedRevocation[] } {
  const entries = [...states].sort(([, a], [, b]) => a.dn.localeCompare(b.dn));
  const byDn = new Map(entries.map(([, s]) => [s.dn.toLowerCase(), s]));
  const people = entries.filter(([, s]) => has(s, "objectClass", "inetOrgPerson"));
  const groups = REVIEWED.map((cn) =>
    entries.find(([, s]) => /,ou=groups,/i.test(s.dn) && first(s, "cn") === cn),
  ).filter((group) => group !== undefined);
  const revoked: PlannedRevocation[] = [];
  for (const [index, [, group]] of groups.entries()) {
    const cn = first(group, "cn") as (typeof REVIEWED)[number];
    // identity-team's an engineer who left it, finance's someone of another department.
    const department =
      cn === "finance"
        ? (dn: string) => !/,ou=finance,/i.test(dn)
        : (dn: string) => /,ou=engineering,/i.test(dn);
    const outside = people.filter(
      ([uuid, s]) =>
        !taken.has(uuid) &&
        department(s.dn) &&
        !has(group, "member", s.dn) &&
        !has(group, "owner", s.dn) &&
        !/^Head/.test(first(s, "title")),
    );
    const chosen = outside[(index * 11 + 5) % Math.max(1, outside.length)];
    if (!chosen) continue;
    taken.add(chosen[0]);
    revoked.push({ group: group.dn, member: chosen[1].dn, reason: REASONS[cn] });
  }
  const ownerOf = (item: ReviewItem) => byDn.get(item.reviewers[0]?.toLowerCase() ?? "");
  const session = (at: Date, days: number, hour: number) => {
    const day = new Date(at.getTime() + days * DAY);
    day.setUTCHours(hour, 0, 0, 0);
    return day;
  };

  // Last quarter's: started by the schedule at annal's first look, the seeded past's first
  // morning; each owner decides over the next days, but for one item nobody decided.
  const finished = new Date(start.getTime() + HOUR);
  const lastQuarter: CampaignPlan = {
    at: finished,
    startedBy: "schedule",
    decide: (items) => {
      const decisions: PlannedDecision[] = [];
      const revocationOf = (item: ReviewItem) =>
        revoked.find((r) => sameDn(r.group, item.groupDn) && sameDn(r.member, item.memberDn));
      const left = items.filter((item) => ownerOf(item) && !revocationOf(item)).at(-1);
      for (const [i, item] of items.entries()) {
        const owner = ownerOf(item);
        if (!owner || item === left) continue;
        const revocation = revocationOf(item);
        // Each owner decides in three sittings, many at once; a revocation on its own.
        const group = REVIEWED.findIndex((cn) =>
          item.groupDn.toLowerCase().startsWith(`cn=${cn},`),
        );
        const sitting = session(finished, 2 + (i % 3) * 2, 9 + Math.max(0, group));
        decisions.push({
          at: new Date(sitting.getTime() + (revocation ? 40 * 60_000 : 0)),
          itemId: item.itemId,
          as: actor(owner),
          ...(revocation
            ? { decision: "revoke", reason: revocation.reason }
            : { decision: "keep", ...(i % 4 === 0 ? { reason: "Still needs it" } : {}) }),
        });
      }
      return decisions;
    },
  };

  // This quarter's: finance's owner has kept the first three of theirs the day after.
  const quarter = quarterStart(now);
  const open = new Date(Math.max(quarter.getTime(), session(now, -4, 7).getTime()));
  const sameQuarter = quarterStart(finished).getTime() === quarter.getTime();
  const operator = byDn.get(first(byDn.get("cn=managers,ou=groups,dc=example,dc=org")!, "member"));
  const thisQuarter: CampaignPlan = {
    at: open,
    // Where the seeded past began this quarter, its schedule's campaign is the finished one.
    startedBy: sameQuarter && operator ? actor(operator) : "schedule",
    decide: (items) => {
      const financeItems = items.filter((item) => /^cn=finance,/i.test(item.groupDn));
      return financeItems.slice(0, 3).flatMap((item) => {
        const owner = ownerOf(item);
        if (!owner) return [];
        const at = session(open, 1, 8);
        return [{ at, itemId: item.itemId, as: actor(owner), decision: "keep" as const }];
      });
    },
  };
  return { plans: [lastQuarter, thisQuarter], revoked };
}

/** The first moment of the quarter `at` lies in (UTC), as the review schedule counts. */
function quarterStart(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), Math.floor(at.getUTCMonth() / 3) * 3, 1));
}

/** A demo person as the engine takes an account (no account of theirs existed then). */
function actor(person: EntryState): Actor {
  return {
    accountId: `demo-history:${first(person, "uid")}`,
    name: first(person, "uid"),
    dn: person.dn,
    principals: [person.dn],
    access: [],
  };
}

function sameDn(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

function has(state: EntryState, attribute: string, value: string): boolean {
  const wanted = value.toLowerCase();
  return (state.attributes[attribute] ?? []).some((v) => v.toLowerCase() === wanted);
}

function first(state: EntryState | undefined, attribute: string): string {
  return state?.attributes[attribute]?.[0] ?? "";
}
