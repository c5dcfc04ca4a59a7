import { accessAt } from "../../auth/index.ts";
import type { Queryable } from "../../db/index.ts";
import {
  DELEGATION_EVENT_TYPES,
  type ActorRef,
  type DelegationEnded,
  type DelegationGranted,
} from "../../events/index.ts";
import { logOrder } from "../../store/index.ts";
import { canonicalPrincipal } from "../../../projections/workflows/index.ts";
import type { Actor } from "../access.ts";

/** One delegation as its events fold: who, to whom, the period, and its early end if any. */
export interface Delegation {
  readonly id: string;
  readonly delegator: ActorRef;
  readonly delegate: ActorRef;
  readonly from: Date;
  readonly until: Date;
  readonly grantedAt: Date;
  readonly ended: { readonly by: ActorRef; readonly at: Date } | null;
}

/** `scheduled` before `from`, `active` in its period, `ended` early, `expired` past `until`. */
export type DelegationState = "scheduled" | "active" | "ended" | "expired";

export function delegationState(delegation: Delegation, at: Date): DelegationState {
  const t = at.getTime();
  if (delegation.ended && delegation.ended.at.getTime() <= t) return "ended";
  if (delegation.until.getTime() <= t) return "expired";
  return delegation.from.getTime() <= t ? "active" : "scheduled";
}

/** Whether `delegation` holds at `at`: from `from` up to `until` or its early end. */
export function inForce(delegation: Delegation, at: Date): boolean {
  return delegationState(delegation, at) === "active";
}

/**
 * Every delegation recorded, folded from its events in log order (the few delegation events,
 * found by their index). `account`: only those it gave or received.
 */
export async function readDelegations(
  db: Queryable,
  options: { readonly account?: string } = {},
): Promise<Delegation[]> {
  const rows = await db.query<DelegationEventRow>(
    `SELECT e.type, e.data, e.occurred_at FROM events AS e WHERE e.type = ANY($1::text[])
      ORDER BY ${logOrder("e")}`,
    [DELEGATION_EVENT_TYPES],
  );
  const all = foldDelegations(rows.rows);
  const account = options.account;
  return account === undefined
    ? all
    : all.filter((d) => d.delegator.accountId === account || d.delegate.accountId === account);
}

/**
 * The database's clock (`annal_now()`) and the delegations in force then, in one statement: a
 * request that needs both (a reviewer's page of items) makes one round trip for them.
 */
export async function delegationsInForceNow(
  db: Queryable,
): Promise<{ readonly now: Date; readonly delegations: Delegation[] }> {
  const rows = await db.query<{ now: Date } & Partial<DelegationEventRow>>(
    `SELECT c.now, e.type, e.data, e.occurred_at
       FROM (SELECT annal_now() AS now) AS c
       LEFT JOIN events AS e ON e.type = ANY($1::text[])
      ORDER BY ${logOrder("e")}`,
    [DELEGATION_EVENT_TYPES],
  );
  const now = rows.rows[0]!.now;
  const events = rows.rows.filter((row): row is { now: Date } & DelegationEventRow => !!row.type);
  return { now, delegations: foldDelegations(events).filter((d) => inForce(d, now)) };
}

interface DelegationEventRow {
  readonly type: string;
  readonly data: unknown;
  readonly occurred_at: Date;
}

/** Delegations folded from their events, given in log order. */
function foldDelegations(rows: readonly DelegationEventRow[]): Delegation[] {
  const found = new Map<string, Delegation>();
  for (const row of rows) {
    if (row.type === "DelegationGranted") {
      const data = row.data as DelegationGranted;
      found.set(data.delegationId, {
        id: data.delegationId,
        delegator: data.delegator,
        delegate: data.delegate,
        from: new Date(data.from),
        until: new Date(data.until),
        grantedAt: row.occurred_at,
        ended: null,
      });
    } else {
      const data = row.data as DelegationEnded;
      const delegation = found.get(data.delegationId);
      if (delegation && !delegation.ended) {
        found.set(data.delegationId, {
          ...delegation,
          ended: { by: data.by, at: new Date(data.endedAt) },
        });
      }
    }
  }
  return [...found.values()];
}

/** The delegations in force at `at`, the earliest granted first. */
export async function delegationsInForce(db: Queryable, at: Date): Promise<Delegation[]> {
  return (await readDelegations(db)).filter((d) => inForce(d, at));
}

/**
 * What `account` was an assignee as at `at`: its id, `account:<id>`, its DN and the principals
 * it held then (from the `access` projection), canonical.
 */
export async function assigneeKeysAt(
  db: Queryable,
  account: ActorRef,
  at: Date,
): Promise<string[]> {
  const report = await accessAt(db, { at, account: account.accountId });
  const held = report.accounts.find((a) => a.id === account.accountId);
  return [
    ...new Set(
      [
        account.accountId,
        `account:${account.accountId}`,
        ...(account.dn ? [account.dn] : []),
        ...(held?.principals ?? []),
      ].map(canonicalPrincipal),
    ),
  ];
}

/**
 * The delegators `actor` answers for at `at` whose assignee keys meet `assignees`: the first
 * found, or undefined when no delegation in force lets `actor` answer.
 */
export async function delegatorAmong(
  db: Queryable,
  actor: Actor,
  assignees: readonly string[],
  at: Date,
): Promise<ActorRef | undefined> {
  const wanted = new Set(assignees.map(canonicalPrincipal));
  for (const delegation of await delegationsInForce(db, at)) {
    if (delegation.delegate.accountId !== actor.accountId) continue;
    const keys = await assigneeKeysAt(db, delegation.delegator, at);
    if (keys.some((key) => wanted.has(key))) return delegation.delegator;
  }
  return undefined;
}
