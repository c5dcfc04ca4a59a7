import {
  DIALOGS,
  WORKFLOW_INSTANCES,
  canonicalPrincipal,
  foldInstance,
  stateFromJson,
  type DialogRow,
  type InstanceState,
  type InstanceStatus,
} from "../../projections/workflows/index.ts";
import type { Queryable } from "../db/index.ts";
import type { ActorRef } from "../events/index.ts";
import { isAssignee, seesAll, type Actor } from "./access.ts";
import { assigneeKeysAt, delegationsInForce } from "./delegation/index.ts";
import { instanceEvents } from "./advance.ts";

/**
 * An instance as it was at `at`: its events up to that moment (by when they happened), folded.
 * Undefined before it started.
 */
export async function instanceAt(
  db: Queryable,
  instanceId: string,
  at: Date,
): Promise<InstanceState | undefined> {
  const events = await instanceEvents(db, instanceId);
  return foldInstance(events.filter((event) => event.occurredAt.getTime() <= at.getTime()));
}

/** What `actor` is an assignee as: its account and its principals, canonical. */
function assigneeKeys(actor: Actor): string[] {
  return [
    actor.accountId,
    `account:${actor.accountId}`,
    ...actor.principals.map(canonicalPrincipal),
    ...(actor.dn ? [canonicalPrincipal(actor.dn)] : []),
  ];
}

/** A pending dialog of an inbox; `delegatedBy`: whose it is, when a delegation put it there. */
export type InboxRow = DialogRow & { readonly delegatedBy: ActorRef | null };

/**
 * The pending dialogs `actor` may answer, the oldest first (from the `workflows` projection):
 * those it is an assignee of, and those of each person who delegated to it at `at` (their
 * assignee keys then), save the instances `actor` started itself; `after`: the id of the last
 * dialog of the page before.
 */
export async function inboxOf(
  db: Queryable,
  actor: Actor,
  limit = 100,
  after?: string,
  at: Date = new Date(),
  except: readonly string[] = [],
): Promise<InboxRow[]> {
  const own = (await dialogsAssigned(db, assigneeKeys(actor), limit, after, except)).map((row) => ({
    ...row,
    delegatedBy: null,
  }));
  const seen = new Set(own.map((row) => row.dialog_id));
  const rows: InboxRow[] = [...own];
  for (const delegation of await delegationsInForce(db, at)) {
    if (delegation.delegate.accountId !== actor.accountId) continue;
    const keys = await assigneeKeysAt(db, delegation.delegator, at);
    for (const row of await dialogsAssigned(db, keys, limit, after, except, actor.accountId)) {
      if (seen.has(row.dialog_id) || isAssignee(actor, row.assignees)) continue;
      seen.add(row.dialog_id);
      rows.push({ ...row, delegatedBy: delegation.delegator });
    }
  }
  return rows
    .sort(
      (a, b) =>
        a.opened_at.getTime() - b.opened_at.getTime() ||
        (a.dialog_id < b.dialog_id ? -1 : a.dialog_id > b.dialog_id ? 1 : 0),
    )
    .slice(0, limit);
}

/**
 * Pending dialogs assigned to any of `keys`, oldest first, but those of the workflows `except`;
 * `notStartedBy`: save its instances.
 */
async function dialogsAssigned(
  db: Queryable,
  keys: readonly string[],
  limit: number,
  after: string | undefined,
  except: readonly string[],
  notStartedBy?: string,
): Promise<DialogRow[]> {
  const params: unknown[] = [keys, limit];
  const others =
    except.length === 0 ? "" : `AND NOT (d.workflow = ANY($${params.push(except)}::text[]))`;
  const from =
    after === undefined
      ? ""
      : `AND (d.opened_at, d.dialog_id) > (SELECT a.opened_at, a.dialog_id FROM ${DIALOGS} AS a WHERE a.dialog_id = $${params.push(after)})`;
  const notOwn =
    notStartedBy === undefined
      ? ""
      : `AND NOT EXISTS (SELECT 1 FROM ${WORKFLOW_INSTANCES} AS i
           WHERE i.instance_id = d.instance_id AND i.started_by_id = $${params.push(notStartedBy)})`;
  const result = await db.query<DialogRow>(
    `SELECT d.* FROM ${DIALOGS} AS d WHERE d.state = 'pending' AND d.assignees && $1::text[] ${others} ${from} ${notOwn}
      ORDER BY d.opened_at, d.dialog_id LIMIT $2`,
    params,
  );
  return result.rows;
}

/** Which instances: every condition given must hold. */
export interface InstanceFilter {
  readonly status?: InstanceStatus;
  /** The definition's name. */
  readonly definition?: string;
  /** The starting account's id or name. */
  readonly startedBy?: string;
  /** Started at or after. */
  readonly since?: Date;
}

/**
 * The instances `actor` may see (see `maySeeInstance`) that match `filter`, the most recently
 * started first, from the `workflows` projection; `after`: the id of the last instance of the
 * page before. `more` tells whether another page follows.
 */
export async function listInstances(
  db: Queryable,
  actor: Actor,
  filter: InstanceFilter,
  page: { readonly first: number; readonly after?: string },
): Promise<{ readonly instances: InstanceState[]; readonly more: boolean }> {
  const params: unknown[] = [];
  const bind = (value: unknown) => `$${params.push(value)}`;
  const conditions: string[] = [];
  if (!seesAll(actor)) {
    conditions.push(
      `(i.started_by_id = ${bind(actor.accountId)} OR i.instance_id IN
         (SELECT d.instance_id FROM ${DIALOGS} AS d WHERE d.assignees && ${bind(assigneeKeys(actor))}::text[]))`,
    );
  }
  if (filter.status !== undefined) conditions.push(`i.status = ${bind(filter.status)}`);
  if (filter.definition !== undefined) conditions.push(`i.definition = ${bind(filter.definition)}`);
  if (filter.startedBy !== undefined) {
    const who = bind(filter.startedBy);
    conditions.push(`(i.started_by_id = ${who} OR i.started_by = ${who})`);
  }
  if (filter.since !== undefined) conditions.push(`i.started_at >= ${bind(filter.since)}`);
  if (page.after !== undefined) {
    conditions.push(
      `(i.started_at, i.instance_id) < (SELECT a.started_at, a.instance_id FROM ${WORKFLOW_INSTANCES} AS a
         WHERE a.instance_id = ${bind(page.after)}::uuid)`,
    );
  }
  const result = await db.query<{ state: unknown }>(
    `SELECT i.state FROM ${WORKFLOW_INSTANCES} AS i
      ${conditions.length > 0 ? `WHERE ${conditions.join(" AND ")}` : ""}
      ORDER BY i.started_at DESC, i.instance_id DESC LIMIT ${bind(page.first + 1)}`,
    params,
  );
  const instances = result.rows.slice(0, page.first).map((row) => stateFromJson(row.state));
  return { instances, more: result.rows.length > page.first };
}

/** The children an instance started, in the order it started them (from the projection). */
export async function childrenOf(db: Queryable, instanceId: string): Promise<string[]> {
  const result = await db.query<{ instance_id: string }>(
    `SELECT i.instance_id FROM ${WORKFLOW_INSTANCES} AS i WHERE i.parent_id = $1
      ORDER BY i.started_at, i.instance_id`,
    [instanceId],
  );
  return result.rows.map((row) => row.instance_id);
}

/** A deployed definition version, and how many of its instances are not over. */
export interface DefinitionVersion {
  readonly name: string;
  readonly version: number;
  readonly hash: string;
  readonly file: string;
  readonly deployedAt: Date;
  /** Instances neither COMPLETED nor CANCELLED; null before the projection is built. */
  readonly live: number | null;
}

/** Every deployed definition version, by name and version (`annal workflows list`). */
export async function definitionInventory(db: Queryable): Promise<DefinitionVersion[]> {
  const built = await db.query<{ built: boolean }>("SELECT to_regclass($1) IS NOT NULL AS built", [
    WORKFLOW_INSTANCES,
  ]);
  const live = built.rows[0]?.built
    ? `(SELECT count(*)::int FROM ${WORKFLOW_INSTANCES} AS i
         WHERE i.hash = d.data->>'hash' AND i.status NOT IN ('COMPLETED', 'CANCELLED'))`
    : "NULL::int";
  const result = await db.query<{
    name: string;
    version: number;
    hash: string;
    file: string;
    deployed_at: Date;
    live: number | null;
  }>(
    `SELECT d.data->>'name' AS name, (d.data->>'version')::int AS version, d.data->>'hash' AS hash,
            d.data->>'file' AS file, d.recorded_at AS deployed_at, ${live} AS live
       FROM events AS d WHERE d.type = 'WorkflowDefinitionDeployed'
      ORDER BY d.data->>'name', (d.data->>'version')::int`,
  );
  return result.rows.map((row) => ({
    name: row.name,
    version: row.version,
    hash: row.hash,
    file: row.file,
    deployedAt: row.deployed_at,
    live: row.live,
  }));
}
