import {
  canonicalIdentity,
  type DirectoryEntry,
  type IdentitySetting,
} from "../directory/index.ts";
import type { AttributeChange } from "../events/index.ts";
import { runInSlices, runToEnd, SLICE_VALUES, type Slices } from "../slices.ts";
import type { AccesslogRecord, RawChange } from "./accesslog.ts";

/**
 * The Retro Changelog of 389 Directory Server (and of Red Hat Directory Server and FreeIPA,
 * which are 389): one entry a write under `cn=changelog`, named by its `changeNumber`, a
 * counter the server increments by one a write, so the log's order is the order the writes
 * were applied in, and two writes in one second are two numbers.
 *
 * A record holds `targetDn`, `changeType`, `changeTime` (to the second), `newRDN`,
 * `deleteOldRDN` and `newSuperior` for a rename, and `changes`: what was written, as LDIF (an
 * add's attributes; a modify's `add:`/`delete:`/`replace:` blocks, each ended by `-`). The
 * server writes its own operational attributes into it too (`modifiersName`, `creatorsName`,
 * `modifyTimestamp`): they say who made the change. The entry's identity is in the record when
 * the plugin maps it (`nsslapd-attribute: nsuniqueid:targetUniqueId`, and
 * `entryuuid:targetEntryUUID` with the entryUUID plugin).
 */
export const CHANGELOG_BASE = "cn=changelog";

export const CHANGELOG_ATTRIBUTES = [
  "changeNumber",
  "changeType",
  "targetDn",
  "changeTime",
  "changes",
  "newRDN",
  "deleteOldRDN",
  "newSuperior",
  "targetUniqueId",
  "targetEntryUUID",
] as const;

/** `changes` carries values of any syntax: read it as bytes. */
export const CHANGELOG_BINARY = ["changes"] as const;

/**
 * A changelog record as capture records it: the same shape as an accesslog record (what both
 * tell of a write is the same), with the change number as its place in the log.
 */
export interface ChangelogRecord extends AccesslogRecord {
  readonly changeNumber: number;
}

const TYPES: Record<string, AccesslogRecord["type"]> = {
  add: "add",
  modify: "modify",
  modrdn: "modrdn",
  delete: "delete",
};

/** Turns a changelog entry into a record, or undefined for one that is not a write's. */
export function parseChangelogEntry(
  entry: DirectoryEntry,
  identity: IdentitySetting,
): ChangelogRecord | undefined {
  return runToEnd(changelogRecordSlices(entry, identity));
}

/** `parseChangelogEntry` with a turn of the event loop every `SLICE_VALUES` lines. */
export function readChangelogEntry(
  entry: DirectoryEntry,
  identity: IdentitySetting,
): Promise<ChangelogRecord | undefined> {
  return runInSlices(changelogRecordSlices(entry, identity));
}

function* changelogRecordSlices(
  entry: DirectoryEntry,
  identity: IdentitySetting,
): Slices<ChangelogRecord | undefined> {
  const text = (name: string) => firstText(entry, name);
  const type = TYPES[(text("changeType") ?? "").toLowerCase()];
  const changeNumber = Number(text("changeNumber"));
  const dn = text("targetDn");
  if (!type || !Number.isSafeInteger(changeNumber) || dn === undefined) return undefined;
  const written = entry.attributes.changes?.[0];
  const lines = written === undefined ? [] : yield* ldifLines(toBuffer(written));
  const changes = type === "add" ? yield* addedValues(lines) : yield* modifications(lines);
  const time = text("changeTime") ?? "";
  const deleteOldRDN = text("deleteOldRDN");
  const newRDN = text("newRDN");
  const newSuperior = text("newSuperior");
  return {
    changeNumber,
    // The accesslog's names for the record's id and time: `changeTime` has whole seconds,
    // the number orders the log.
    reqStart: time,
    reqEnd: time,
    type,
    dn,
    entryUUID: recordIdentity(entry, identity),
    actor: authorOf(type, changes),
    changes,
    reqOld: [],
    ...(newRDN === undefined ? {} : { newRDN }),
    ...(deleteOldRDN === undefined ? {} : { deleteOldRDN: deleteOldRDN.toUpperCase() === "TRUE" }),
    ...(newSuperior === undefined ? {} : { newSuperior }),
  };
}

/**
 * The entry's identity as the record tells it, as `[directory] identity` takes it: its
 * entryUUID (`targetEntryUUID`) or its nsUniqueId (`targetUniqueId`).
 */
function recordIdentity(entry: DirectoryEntry, identity: IdentitySetting): string | undefined {
  const entryUUID = firstText(entry, "targetEntryUUID");
  const uniqueId = firstText(entry, "targetUniqueId");
  const fromEntryUUID = entryUUID && canonicalIdentity("entryUUID", entryUUID);
  const fromUniqueId = uniqueId && canonicalIdentity("nsUniqueId", uniqueId);
  switch (identity) {
    case "entryUUID":
      return fromEntryUUID || undefined;
    case "nsUniqueId":
      return fromUniqueId || undefined;
    case "objectGUID":
      return undefined;
    case "auto":
      return fromEntryUUID || fromUniqueId || undefined;
  }
}

/**
 * Who made the change: the server writes `creatorsName` into an add and `modifiersName` into a
 * modify or a rename. A delete's record says nothing of it: its author is unknown, and none is
 * made up.
 */
function authorOf(
  type: AccesslogRecord["type"],
  changes: readonly RawChange[],
): string | undefined {
  const name = type === "add" ? "creatorsname" : "modifiersname";
  const value = changes.find((c) => c.attribute.toLowerCase() === name)?.values.at(-1);
  return value === undefined ? undefined : toBuffer(value).toString("utf8");
}

/** One `attribute: value` line of LDIF, its value decoded (`::` is base64). */
interface LdifLine {
  readonly attribute: string;
  readonly value: Buffer | undefined;
}

/**
 * The lines of an LDIF text, unfolded (a line that begins with a space continues the one
 * before), with `-` kept as a separator (value undefined) and the NUL 389 ends the text with
 * dropped.
 */
function* ldifLines(bytes: Buffer): Slices<LdifLine[]> {
  const text = bytes.toString("utf8").replace(/\0+$/, "");
  const raw = text.split(/\r?\n/);
  const unfolded: string[] = [];
  for (const line of raw) {
    if (line.startsWith(" ") && unfolded.length > 0) unfolded[unfolded.length - 1] += line.slice(1);
    else unfolded.push(line);
  }
  const lines: LdifLine[] = [];
  for (let i = 0; i < unfolded.length; i++) {
    if (i % SLICE_VALUES === SLICE_VALUES - 1) yield;
    const line = unfolded[i]!;
    if (line === "-") {
      lines.push({ attribute: "-", value: undefined });
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const attribute = line.slice(0, colon);
    const rest = line.slice(colon + 1);
    const value = rest.startsWith(":")
      ? Buffer.from(rest.slice(1).trim(), "base64")
      : Buffer.from(rest.startsWith(" ") ? rest.slice(1) : rest, "utf8");
    lines.push({ attribute, value });
  }
  return lines;
}

/** An add's LDIF: every value as an `add`, consecutive values of one attribute together. */
function* addedValues(lines: readonly LdifLine[]): Slices<RawChange[]> {
  const changes: RawChange[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (i % SLICE_VALUES === SLICE_VALUES - 1) yield;
    const { attribute, value } = lines[i]!;
    if (value === undefined) continue;
    const last = changes.at(-1);
    if (last && last.attribute.toLowerCase() === attribute.toLowerCase()) last.values.push(value);
    else changes.push({ operation: "add", attribute, values: [value] });
  }
  return changes;
}

const OPERATIONS: Record<string, AttributeChange["operation"]> = {
  add: "add",
  delete: "delete",
  replace: "replace",
  increment: "increment",
};

/** A modify's LDIF: `<op>: <attribute>`, its values, then `-`, for each modification. */
function* modifications(lines: readonly LdifLine[]): Slices<RawChange[]> {
  const changes: RawChange[] = [];
  let current: RawChange | undefined;
  for (let i = 0; i < lines.length; i++) {
    if (i % SLICE_VALUES === SLICE_VALUES - 1) yield;
    const { attribute, value } = lines[i]!;
    if (value === undefined) {
      current = undefined;
      continue;
    }
    const operation = current ? undefined : OPERATIONS[attribute.toLowerCase()];
    if (operation) {
      current = { operation, attribute: value.toString("utf8").trim(), values: [] };
      changes.push(current);
    } else if (current && attribute.toLowerCase() === current.attribute.toLowerCase()) {
      current.values.push(value);
    }
  }
  return changes;
}

function firstText(entry: DirectoryEntry, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const key of Object.keys(entry.attributes)) {
    if (key.toLowerCase() !== lower) continue;
    const value = entry.attributes[key]?.[0];
    return value === undefined ? undefined : toBuffer(value).toString("utf8");
  }
  return undefined;
}

function toBuffer(value: string | Buffer): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value, "utf8");
}
