import { createHash } from "node:crypto";
import { BUILT_IN_REDACTED_ATTRIBUTES } from "../config/index.ts";
import type { Pool, Queryable } from "../db/index.ts";
import type { AttributeValues } from "../directory/index.ts";
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

/** One change of a modify as the fingerprint sees it; its values, where the writer knows them. */
export interface FingerprintedChange {
  readonly operation: string;
  readonly attribute: string;
  readonly values?: AttributeValues | readonly (string | Buffer)[];
}

/**
 * What a write does, the same whether computed from the request annal sends or from the
 * accesslog's record of it: `add`, `delete`, `modrdn:<new rdn>`, or for a modify the sorted
 * `<operation>:<attribute>` pairs of its user attributes and, after `#`, a digest of their
 * values (`valuesDigest`): two writes of one shape to one entry by one identity (annal's
 * workflow adding one member to a group, an administrator bound as annal's account adding
 * another) are told apart by what they wrote.
 */
export function writeFingerprint(
  write:
    | { kind: "add" | "delete" }
    | { kind: "modrdn"; newRDN: string }
    | {
        kind: "modify";
        changes: readonly FingerprintedChange[];
        /** `valuesDigest` of the changes, made where their values were known. */
        digest?: string;
      },
): string {
  switch (write.kind) {
    case "add":
    case "delete":
      return write.kind;
    case "modrdn":
      return `modrdn:${normalizeDN(write.newRDN)}`;
    case "modify":
      return `${modifyShape(write.changes)}#${write.digest ?? valuesDigest(write.changes)}`;
  }
}

/** `modify:<operation>:<attribute>,...`, the modify's fingerprint without its values. */
function modifyShape(changes: readonly FingerprintedChange[]): string {
  const pairs = changes.map((c) => `${c.operation}:${c.attribute.toLowerCase()}`);
  return `modify:${[...new Set(pairs)].sort().join(",")}`;
}

/** A fingerprint without its values' digest: what a note of an older annal holds. */
function withoutDigest(fingerprint: string): string {
  const hash = fingerprint.indexOf("#");
  return hash < 0 ? fingerprint : fingerprint.slice(0, hash);
}

/** Attributes whose values the digest leaves out: a hash of a password is not kept anywhere. */
const SECRET = new Set(BUILT_IN_REDACTED_ATTRIBUTES.map((name) => name.toLowerCase()));

/**
 * A digest of a modify's values: per operation and attribute, its values as bytes, sorted
 * (the accesslog merges consecutive values of one attribute and operation into one change),
 * the secrets' left out. 16 hex digits: a note lives minutes and is matched by entry first.
 */
export function valuesDigest(changes: readonly FingerprintedChange[]): string {
  const byKey = new Map<string, Buffer[]>();
  for (const change of changes) {
    const attribute = change.attribute.toLowerCase();
    const key = `${change.operation}:${attribute}`;
    const values = byKey.get(key) ?? [];
    byKey.set(key, values);
    if (SECRET.has(attribute)) continue;
    const given = change.values;
    const list = given === undefined ? [] : Array.isArray(given) ? given : [given];
    for (const value of list as readonly (string | Buffer)[]) {
      values.push(Buffer.isBuffer(value) ? value : Buffer.from(value, "utf8"));
    }
  }
  const hash = createHash("sha256");
  for (const key of [...byKey.keys()].sort()) {
    hash.update(`${key}\n`);
    for (const value of byKey.get(key)!.sort(Buffer.compare)) {
      hash.update(`${value.length}:`);
      hash.update(value);
    }
  }
  return hash.digest("hex").slice(0, 16);
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
  // A note of the same values first; one without a digest (an older annal's, made before an
  // upgrade) by its shape. A note with another digest is another write.
  const result = await tx.query<{ causation_id: string; correlation_id: string | null }>(
    `DELETE FROM directory_write_intents WHERE id = (
       SELECT id FROM directory_write_intents
        WHERE dn_norm = ANY($1::text[]) AND (actor_norm = $2 OR $4)
          AND (fingerprint = $3 OR fingerprint = $5)
          AND created_at > now() - interval '${INTENT_LIFETIME}'
        ORDER BY fingerprint = $3 DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED)
     RETURNING causation_id, correlation_id`,
    [
      change.dns.map((dn) => normalizeDN(dn)),
      actor,
      change.fingerprint,
      byAnnal,
      withoutDigest(change.fingerprint),
    ],
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
      withoutDigest(row.fingerprint)
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
