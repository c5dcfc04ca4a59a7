/**
 * The demo's past access requests: who asked to join which group, when, and who answered how,
 * over the seeded weeks. The requests are not written by hand: the history runs them through
 * the deployed `access-request` definition (`EnactPast`, the real engine on a moved clock), so
 * the log holds what the engine would have recorded then, escalations and all. Some approved
 * by the group's owner, some denied, some escalated to the owner's manager or on to the
 * operators, one left to expire.
 */
import type { EntryState } from "../events/index.ts";
import type { DirectoryAt } from "../history/index.ts";
import type { Actor, InstanceState } from "../workflow/index.ts";

const HOUR = 3600 * 1000;
const DAY = 24 * HOUR;
/** The demo's operators (ops/demo/workflows/shared/directory.ts). */
const OPERATORS = "cn=annal-operators,ou=roles,dc=example,dc=org";
/** The definition the requests are runs of. */
export const ACCESS_REQUEST = "access-request";

/** An answer to the request's dialog, once its escalation reached `atLevel`, `afterMs` later. */
export interface PlannedAnswer {
  readonly atLevel: number;
  readonly afterMs: number;
  readonly as: Actor;
  readonly answer: { readonly approved: boolean; readonly comment?: string };
}

/** One past request, as `EnactPast` takes it. */
export interface RequestPlan {
  readonly at: Date;
  readonly name: string;
  readonly parameters: { readonly group: string; readonly reason: string };
  readonly startedBy: Actor;
  readonly answers: readonly PlannedAnswer[];
}

/** A write a request's step made, as the enactment noted it. */
export interface EnactedWrite {
  readonly instanceId: string;
  readonly stepEvent: string;
  readonly write: {
    readonly operation: string;
    readonly dn: string;
    readonly as: string | null;
    readonly at: string;
    readonly values?: Readonly<Record<string, { readonly added?: readonly string[] }>>;
  };
}

/**
 * Runs the plans with the deployed definition over the past `directoryAt` gives; answers the
 * events to append (with their moments), the writes the steps made, and the instances. The
 * app gives the simulator's `enactPast` (a later layer than the demo's).
 */
export type EnactPast = (
  plans: readonly RequestPlan[],
  directoryAt: (at: Date) => Promise<DirectoryAt>,
) => Promise<{
  readonly events: readonly {
    readonly streamId: string;
    readonly event: {
      readonly id?: string;
      readonly type: string;
      readonly data: unknown;
      readonly metadata?: Readonly<Record<string, unknown>>;
      readonly occurredAt: Date;
    };
  }[];
  readonly writes: readonly EnactedWrite[];
  readonly instances: readonly InstanceState[];
}>;

type Outcome = "owner approves" | "owner denies" | "manager approves" | "manager denies";
type Plan = Outcome | "operator approves" | "expires";

/** The story: days ago and what becomes of the request. Approved ones end in today's groups. */
const STORY: readonly [daysAgo: number, plan: Plan][] = [
  [61, "owner approves"],
  [54, "manager approves"],
  [47, "owner denies"],
  [40, "operator approves"],
  [33, "owner approves"],
  [26, "expires"],
  [19, "manager denies"],
  [9, "owner approves"],
  [4, "owner denies"],
];

const REASONS: Readonly<Record<Plan, string>> = {
  "owner approves": "I take over part of the team's work next month",
  "owner denies": "I would like to follow what the group discusses",
  "manager approves": "I stand in for a colleague on parental leave",
  "manager denies": "For the quarterly report I need to read along",
  "operator approves": "I join the project that starts on Monday",
  expires: "Only for a week, while the audit lasts",
};

/**
 * The requests, chosen from today's entries: an approved one asks for a group its requester is
 * in today (the approval put them there), a denied or expired one for a group they are not in.
 * `taken` holds the people the rest of the story uses; the requesters are added to it.
 */
export function requestStory(
  states: ReadonlyMap<string, EntryState>,
  taken: Set<string>,
  now: Date,
): RequestPlan[] {
  const entries = [...states].sort(([, a], [, b]) => a.dn.localeCompare(b.dn));
  const byDn = new Map(entries.map(([, s]) => [s.dn.toLowerCase(), s]));
  const people = entries.filter(([, s]) => has(s, "objectClass", "inetOrgPerson"));
  const owned = entries
    .map(([, s]) => s)
    .filter((s) => /,ou=groups,/i.test(s.dn) && first(s, "owner") !== "")
    .filter((s) => byDn.get(first(s, "owner").toLowerCase())?.attributes.manager);
  // The department leads are in cn=managers, which is in the operators' role.
  const leads = byDn.get("cn=managers,ou=groups,dc=example,dc=org");
  const operators = people.map(([, s]) => s).filter((s) => leads && has(leads, "member", s.dn));
  const plans: RequestPlan[] = [];
  STORY.forEach(([daysAgo, plan], i) => {
    const approved = plan.endsWith("approves");
    // The first group from the i-th on with someone left to ask for it.
    const found = owned
      .map((_, k) => owned[(i * 3 + k) % owned.length]!)
      .map((group) => {
        const owner = byDn.get(first(group, "owner").toLowerCase())!;
        const manager = byDn.get(first(owner, "manager").toLowerCase())!;
        const fits = people.filter(
          ([uuid, s]) =>
            !taken.has(uuid) &&
            has(group, "member", s.dn) === approved &&
            s.dn.toLowerCase() !== owner.dn.toLowerCase() &&
            s.dn.toLowerCase() !== manager.dn.toLowerCase(),
        );
        return { group, owner, manager, chosen: fits[(i * 7) % Math.max(1, fits.length)] };
      })
      .find((candidate) => candidate.chosen !== undefined);
    if (!found?.chosen) return;
    const { group, owner, manager, chosen } = found;
    taken.add(chosen[0]);
    const requester = chosen[1];
    const operator = operators.find((s) => ![requester, owner, manager].some((p) => p.dn === s.dn));
    const answers: PlannedAnswer[] = [];
    const answer = (
      atLevel: number,
      afterMs: number,
      as: EntryState,
      approved: boolean,
      comment?: string,
    ) =>
      answers.push({
        atLevel,
        afterMs,
        as: actor(as, atLevel === 2 ? [OPERATORS] : []),
        answer: { approved, ...(comment ? { comment } : {}) },
      });
    if (plan === "owner approves") answer(0, 2 * HOUR + i * 7 * 60_000, owner, true);
    if (plan === "owner denies") {
      answer(0, DAY, owner, false, "Please ask your manager to talk to me first");
    }
    if (plan === "manager approves") answer(1, 3 * HOUR, manager, true, "Approved for the cover");
    if (plan === "manager denies") answer(1, 2 * HOUR, manager, false, "Not needed for this");
    if (plan === "operator approves" && operator) answer(2, HOUR, operator, true);
    const start = new Date(now.getTime() - daysAgo * DAY);
    start.setUTCHours(9, 40 + i, 0, 0);
    plans.push({
      at: start,
      name: ACCESS_REQUEST,
      parameters: { group: first(group, "cn"), reason: REASONS[plan] },
      startedBy: actor(requester, []),
      answers,
    });
  });
  return plans;
}

/** A demo person as the engine takes an account (no account of theirs existed then). */
function actor(person: EntryState, principals: readonly string[]): Actor {
  return {
    accountId: `demo-history:${first(person, "uid")}`,
    name: first(person, "uid"),
    dn: person.dn,
    principals: [person.dn, ...principals],
    access: [],
  };
}

function has(state: EntryState, attribute: string, value: string): boolean {
  const wanted = value.toLowerCase();
  return (state.attributes[attribute] ?? []).some((v) => v.toLowerCase() === wanted);
}

function first(state: EntryState, attribute: string): string {
  return state.attributes[attribute]?.[0] ?? "";
}
