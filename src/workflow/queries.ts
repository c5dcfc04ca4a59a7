import {
  DIALOGS,
  WORKFLOW_INSTANCES,
  canonicalPrincipal,
  foldInstance,
  type DialogRow,
  type InstanceState,
} from "../../projections/workflows/index.ts";
import type { Queryable } from "../db/index.ts";
import type { Actor } from "./access.ts";
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

/** The pending dialogs `actor` is an assignee of, the oldest first (from the `workflows` projection). */
export async function inboxOf(db: Queryable, actor: Actor, limit = 100): Promise<DialogRow[]> {
  const mine = [
    actor.accountId,
    `account:${actor.accountId}`,
    ...actor.principals.map(canonicalPrincipal),
    ...(actor.dn ? [canonicalPrincipal(actor.dn)] : []),
  ];
  const result = await db.query<DialogRow>(
    `SELECT * FROM ${DIALOGS} AS d WHERE d.state = 'pending' AND d.assignees && $1::text[]
      ORDER BY d.opened_at, d.dialog_id LIMIT $2`,
    [mine, limit],
  );
  return result.rows;
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
