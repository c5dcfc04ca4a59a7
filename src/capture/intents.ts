import type { Pool, Queryable } from "../db/index.ts";
import type { DirectoryClient } from "../directory/index.ts";
import { DirectoryError, normalizeDN } from "../directory/index.ts";

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

/** A note of intent: `withdraw` takes it back when the directory refused its write. */
export interface WriteIntent {
  withdraw(): Promise<void>;
}

/**
 * Notes that `actor` is about to make the write `fingerprint` to `dn` because of `cause`.
 * Withdraw the note when the write is refused (`withdrawnIfRefused`): a note left open could
 * be taken by someone else's change of the same entry, where the directory records no author.
 */
export async function recordWriteIntent(
  db: Queryable,
  intent: { dn: string; actor: string; fingerprint: string } & WriteCause,
): Promise<WriteIntent> {
  const inserted = await db.query<{ id: string }>(
    `INSERT INTO directory_write_intents (dn_norm, actor_norm, fingerprint, causation_id, correlation_id)
     VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [
      normalizeDN(intent.dn),
      normalizeActor(intent.actor),
      intent.fingerprint,
      intent.causationId,
      intent.correlationId ?? null,
    ],
  );
  const id = inserted.rows[0]!.id;
  return {
    async withdraw() {
      await db.query("DELETE FROM directory_write_intents WHERE id = $1", [id]);
    },
  };
}

/**
 * Runs `write`; when the directory answered it with a failure (any LDAP result: a write is
 * all or nothing, so nothing was written), withdraws `intent` before the error goes on. A
 * write whose answer never came (the connection lost, a time limit of annal's) may have been
 * made: its note stays, to be claimed by the change.
 */
export async function withdrawnIfRefused<T>(
  intent: WriteIntent | void,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (intent && error instanceof DirectoryError && error.resultCode !== undefined) {
      await intent.withdraw();
    }
    throw error;
  }
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

/**
 * How far from a change's time (`at`, the directory's clock, to the second) a note may have
 * been made and still be matched by `claimWriteIntentNear`: the second itself, and the two
 * clocks' disagreement (a domain keeps its members within seconds; Kerberos refuses past 5
 * minutes).
 */
const NEAR_SECONDS = 30;

/**
 * Takes the oldest note matching a captured change of a directory that records no author
 * (Active Directory; 389's Retro Changelog for a delete): by the entry (its DN, or the DN before a rename), the kind of write,
 * and the time, a note made within `NEAR_SECONDS` of `at`. A modify is known by the attributes
 * it changed, which must all be among those the note's write touched (the change is observed
 * from states, so its operations are unknown). Without an author, a change made by someone
 * else to the same attributes of the same entry within that window could take annal's note:
 * the price of a directory that does not say who wrote.
 */
export async function claimWriteIntentNear(
  tx: Queryable,
  change: {
    dns: readonly string[];
    /** A `writeFingerprint`, or for a modify the attributes it changed. */
    fingerprint: string | { kind: "modify"; attributes: readonly string[] };
    at: Date;
  },
): Promise<WriteCause | undefined> {
  const exact = typeof change.fingerprint === "string" ? change.fingerprint : undefined;
  const candidates = await tx.query<{ id: string; fingerprint: string }>(
    `SELECT id, fingerprint FROM directory_write_intents
      WHERE dn_norm = ANY($1::text[])
        AND (fingerprint = $2 OR ($2::text IS NULL AND starts_with(fingerprint, 'modify:')))
        AND created_at BETWEEN $3::timestamptz - make_interval(secs => $4)
                           AND $3::timestamptz + make_interval(secs => $4 + 1)
      ORDER BY id FOR UPDATE SKIP LOCKED`,
    [change.dns.map((dn) => normalizeDN(dn)), exact ?? null, change.at, NEAR_SECONDS],
  );
  const changed =
    typeof change.fingerprint === "string"
      ? []
      : change.fingerprint.attributes.map((name) => name.toLowerCase());
  const found = candidates.rows.find((row) => {
    if (exact !== undefined) return row.fingerprint === exact;
    const touched = new Set(
      row.fingerprint
        .slice("modify:".length)
        .split(",")
        .map((pair) => pair.slice(pair.indexOf(":") + 1)),
    );
    return changed.every((name) => touched.has(name));
  });
  if (!found) return undefined;
  const result = await tx.query<{ causation_id: string; correlation_id: string | null }>(
    "DELETE FROM directory_write_intents WHERE id = $1 RETURNING causation_id, correlation_id",
    [found.id],
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
      const intent = await note(dn, opts?.as, writeFingerprint({ kind: "add" }));
      return withdrawnIfRefused(intent, () => client.add(dn, attributes, opts));
    },
    async modify(dn, changes, opts) {
      const intent = await note(dn, opts?.as, writeFingerprint({ kind: "modify", changes }));
      return withdrawnIfRefused(intent, () => client.modify(dn, changes, opts));
    },
    async modifyDN(dn, newRDN, opts) {
      const intent = await note(dn, opts?.as, writeFingerprint({ kind: "modrdn", newRDN }));
      return withdrawnIfRefused(intent, () => client.modifyDN(dn, newRDN, opts));
    },
    async delete(dn, opts) {
      const intent = await note(dn, opts?.as, writeFingerprint({ kind: "delete" }));
      return withdrawnIfRefused(intent, () => client.delete(dn, opts));
    },
  };
}
