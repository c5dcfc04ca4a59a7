import type { Queryable } from "../db/index.ts";
import type { AttributeMap } from "../events/index.ts";
import { normalizeDN, parseDN, rdnOf } from "../directory/index.ts";
import { ENTRIES, type EntriesRow } from "../../projections/entries/index.ts";
import { ENTRY_VERSIONS } from "../../projections/entry-versions/index.ts";

/** An entry as one of the projections holds it: now, or as it was at a moment. */
export interface EntryRecord {
  readonly entryUUID: string;
  /** The configured type it belonged to; null for none. */
  readonly type: string | null;
  readonly dn: string;
  /** User attributes: name → values, binary values base64. */
  readonly attributes: AttributeMap;
  /** Operational attributes (entryUUID, timestamps, creatorsName, ...). */
  readonly operational: AttributeMap;
  /** When this state began: the entry's last change (now), or the version's start (`at`). */
  readonly modifiedAt: Date;
  /** The entry stream's version this state is. */
  readonly version: number;
}

/** What `entryAt` found: the state, or why there is none. */
export type EntryAtResult =
  | { readonly found: true; readonly entry: EntryRecord; readonly validTo: Date | null }
  | { readonly found: false; readonly reason: "unknown" }
  | { readonly found: false; readonly reason: "not-yet" | "deleted"; readonly since: Date };

type EntryRow = Pick<
  EntriesRow,
  "entry_uuid" | "type" | "dn" | "attributes" | "operational" | "modified_at" | "version"
>;

const toRecord = (row: EntryRow): EntryRecord => ({
  entryUUID: row.entry_uuid,
  type: row.type,
  dn: row.dn,
  attributes: row.attributes,
  operational: row.operational,
  modifiedAt: row.modified_at,
  version: row.version,
});

/** The entry as it is now, from `entries`; undefined when it is not there (never, or deleted). */
export async function currentEntry(
  db: Queryable,
  entryUUID: string,
): Promise<EntryRecord | undefined> {
  const result = await db.query<EntryRow>(
    `SELECT entry_uuid, type, dn, attributes, operational, modified_at, version
       FROM ${ENTRIES} WHERE entry_uuid = $1`,
    [entryUUID],
  );
  const row = result.rows[0];
  return row && toRecord(row);
}

/**
 * The entry as it was at `at` (on the clock of `occurred_at`: when the directory says a change
 * happened): the version with the latest start not after `at`, one probe of the
 * (entry_uuid, valid_from) index. A delete is a version too, so "not there then" comes with
 * its reason: not yet created, or deleted, and since when.
 */
export async function entryAt(db: Queryable, entryUUID: string, at: Date): Promise<EntryAtResult> {
  const result = await db.query<EntryRow & { deleted: boolean; valid_to: Date | null }>(
    `SELECT entry_uuid, type, dn, attributes, operational, valid_from AS modified_at, version,
            deleted, valid_to
       FROM ${ENTRY_VERSIONS}
      WHERE entry_uuid = $1 AND valid_from <= $2
      ORDER BY valid_from DESC, version DESC LIMIT 1`,
    [entryUUID, at],
  );
  const row = result.rows[0];
  if (row && !row.deleted) return { found: true, entry: toRecord(row), validTo: row.valid_to };
  if (row) return { found: false, reason: "deleted", since: row.modified_at };
  const first = await db.query<{ first: Date | null }>(
    `SELECT min(valid_from) AS first FROM ${ENTRY_VERSIONS} WHERE entry_uuid = $1`,
    [entryUUID],
  );
  const since = first.rows[0]?.first;
  return since ? { found: false, reason: "not-yet", since } : { found: false, reason: "unknown" };
}

/**
 * The latest version of an entry that is gone from `entries`: its delete, with the type and
 * DN it had. Undefined when the log never knew the entry.
 */
export async function lastVersion(
  db: Queryable,
  entryUUID: string,
): Promise<{ type: string | null; dn: string; deleted: boolean; validFrom: Date } | undefined> {
  const result = await db.query<{
    type: string | null;
    dn: string;
    deleted: boolean;
    valid_from: Date;
  }>(
    `SELECT type, dn, deleted, valid_from FROM ${ENTRY_VERSIONS}
      WHERE entry_uuid = $1 ORDER BY valid_from DESC, version DESC LIMIT 1`,
    [entryUUID],
  );
  const row = result.rows[0];
  return row && { type: row.type, dn: row.dn, deleted: row.deleted, validFrom: row.valid_from };
}

/** Most candidates a historical DN lookup weighs (renames make several entries share a DN). */
const MAX_DN_CANDIDATES = 50;

/**
 * The entry that has `dn` now, or, with `at`, the one that had it then; with `at` = `"ever"`,
 * the one that has it now or else the last one that had it (a deleted entry's history). DNs are compared
 * normalised (RFC 4514: attribute types and case-insensitive values folded), so any spelling
 * of the same DN finds it.
 *
 * Now is one index probe (`entries.dn_norm`). A moment in the past first tries the entry that
 * has the DN now; when that one did not have it then (renamed since, or the DN now belongs to
 * another entry), the versions are scanned for the DN's RDN value and compared normalised:
 * slower, and rare.
 *
 * @throws InvalidDNError (400) for a DN that does not parse.
 */
export async function entryUUIDForDn(
  db: Queryable,
  dn: string,
  at?: Date | "ever",
): Promise<string | undefined> {
  const normal = normalizeDN(parseDN(dn));
  const current = await db.query<{ entry_uuid: string }>(
    `SELECT entry_uuid FROM ${ENTRIES} WHERE dn_norm = $1 LIMIT 1`,
    [normal],
  );
  const now = current.rows[0]?.entry_uuid;
  if (at === undefined || (at === "ever" && now !== undefined)) return now;
  if (at === "ever") return lastToHave(db, normal);
  const hadIt = async (uuid: string) => {
    const state = await entryAt(db, uuid, at);
    return state.found && normalizeDN(state.entry.dn) === normal;
  };
  if (now !== undefined && (await hadIt(now))) return now;
  const rdnValue = (parseDN(rdnOf(normal))[0]?.[0]?.value ?? "").toLowerCase();
  const candidates = await db.query<{ entry_uuid: string; dn: string }>(
    `SELECT DISTINCT entry_uuid, dn FROM ${ENTRY_VERSIONS}
      WHERE NOT deleted AND valid_from <= $2 AND strpos(lower(dn), $1) > 0
      LIMIT ${MAX_DN_CANDIDATES}`,
    [rdnValue, at],
  );
  for (const row of candidates.rows) {
    if (row.entry_uuid === now) continue;
    if (normalizeDN(row.dn) === normal && (await hadIt(row.entry_uuid))) return row.entry_uuid;
  }
  return undefined;
}

/** The entry whose latest version with `dn` (normalised) is the most recent. */
async function lastToHave(db: Queryable, normal: string): Promise<string | undefined> {
  const rdnValue = (parseDN(rdnOf(normal))[0]?.[0]?.value ?? "").toLowerCase();
  const candidates = await db.query<{ entry_uuid: string; dn: string }>(
    `SELECT entry_uuid, dn FROM ${ENTRY_VERSIONS}
      WHERE strpos(lower(dn), $1) > 0
      ORDER BY valid_from DESC, version DESC LIMIT ${MAX_DN_CANDIDATES}`,
    [rdnValue],
  );
  return candidates.rows.find((row) => normalizeDN(row.dn) === normal)?.entry_uuid;
}
