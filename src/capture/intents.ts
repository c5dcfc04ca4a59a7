import type { Pool, Queryable } from "../db/index.ts";
import type { DirectoryClient } from "../directory/index.ts";
import { normalizeDN } from "../directory/index.ts";

/** Why annal is about to write: the event (or request) the write is caused by. */
export interface WriteCause {
  readonly causationId: string;
  readonly correlationId?: string;
}

/** A note older than this is not matched any more (the write failed, or capture is off). */
const INTENT_LIFETIME = "15 minutes";

const normalizeActor = (actor: string) => {
  const dn = actor.replace(/^dn:/i, "");
  try {
    return normalizeDN(dn);
  } catch {
    return dn.toLowerCase();
  }
};

/**
 * What a write does, the same whether computed from the request annal sends or from the
 * accesslog's record of it: `add`, `delete`, `modrdn:<new rdn>`, or for a modify the sorted
 * `<operation>:<attribute>` pairs of its user attributes (values left out: they may be bytes).
 */
export function writeFingerprint(
  write:
    | { kind: "add" | "delete" }
    | { kind: "modrdn"; newRDN: string }
    | { kind: "modify"; changes: readonly { operation: string; attribute: string }[] },
): string {
  switch (write.kind) {
    case "add":
    case "delete":
      return write.kind;
    case "modrdn":
      return `modrdn:${normalizeDN(write.newRDN)}`;
    case "modify": {
      const pairs = write.changes.map((c) => `${c.operation}:${c.attribute.toLowerCase()}`);
      return `modify:${[...new Set(pairs)].sort().join(",")}`;
    }
  }
}

/** Notes that `actor` is about to make the write `fingerprint` to `dn` because of `cause`. */
export async function recordWriteIntent(
  db: Queryable,
  intent: { dn: string; actor: string; fingerprint: string } & WriteCause,
): Promise<void> {
  await db.query(
    `INSERT INTO directory_write_intents (dn_norm, actor_norm, fingerprint, causation_id, correlation_id)
     VALUES ($1, $2, $3, $4, $5)`,
    [
      normalizeDN(intent.dn),
      normalizeActor(intent.actor),
      intent.fingerprint,
      intent.causationId,
      intent.correlationId ?? null,
    ],
  );
}

/**
 * Takes the oldest note matching a captured change (its DN, or the DN before a rename; the
 * identity the directory recorded; what the write did), in the capture's transaction, so each
 * note explains exactly one change.
 */
export async function claimWriteIntent(
  tx: Queryable,
  change: {
    dns: readonly string[];
    actor: string | undefined;
    fingerprint: string;
    /**
     * The DN annal binds as. A directory that records the bound account as the author of a
     * write made for another (389 Directory Server writes its bind into `modifiersName`, not
     * the identity of the proxied authorization) names annal itself: then a note made for any
     * identity matches.
     */
    boundAs?: string;
  },
): Promise<WriteCause | undefined> {
  if (!change.actor) return undefined;
  const actor = normalizeActor(change.actor);
  const byAnnal = change.boundAs !== undefined && normalizeActor(change.boundAs) === actor;
  const result = await tx.query<{ causation_id: string; correlation_id: string | null }>(
    `DELETE FROM directory_write_intents WHERE id = (
       SELECT id FROM directory_write_intents
        WHERE dn_norm = ANY($1::text[]) AND (actor_norm = $2 OR $4) AND fingerprint = $3
          AND created_at > now() - interval '${INTENT_LIFETIME}'
        ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING causation_id, correlation_id`,
    [change.dns.map((dn) => normalizeDN(dn)), actor, change.fingerprint, byAnnal],
  );
  const row = result.rows[0];
  if (!row) return undefined;
  return {
    causationId: row.causation_id,
    ...(row.correlation_id ? { correlationId: row.correlation_id } : {}),
  };
}

type Writes = Pick<DirectoryClient, "add" | "modify" | "modifyDN" | "delete">;

/**
 * The client's writes, each noted first with its cause, so the change capture records is
 * linked to it. `boundAs` is the DN the client binds as: the identity the directory records
 * when a write has no `as`.
 */
export function causedWrites(
  client: Writes,
  options: { pool: Pool; boundAs: string; cause: WriteCause },
): Writes {
  const note = (dn: string, as: string | undefined, fingerprint: string) =>
    recordWriteIntent(options.pool, {
      dn,
      actor: as ?? options.boundAs,
      fingerprint,
      ...options.cause,
    });
  return {
    async add(dn, attributes, opts) {
      await note(dn, opts?.as, writeFingerprint({ kind: "add" }));
      return client.add(dn, attributes, opts);
    },
    async modify(dn, changes, opts) {
      await note(dn, opts?.as, writeFingerprint({ kind: "modify", changes }));
      return client.modify(dn, changes, opts);
    },
    async modifyDN(dn, newRDN, opts) {
      await note(dn, opts?.as, writeFingerprint({ kind: "modrdn", newRDN }));
      return client.modifyDN(dn, newRDN, opts);
    },
    async delete(dn, opts) {
      await note(dn, opts?.as, writeFingerprint({ kind: "delete" }));
      return client.delete(dn, opts);
    },
  };
}
