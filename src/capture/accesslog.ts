import type { DirectoryEntry } from "../directory/index.ts";
import type { AttributeChange } from "../events/index.ts";
import { runInSlices, runToEnd, SLICE_VALUES, type Slices } from "../slices.ts";

/** One successful write from slapd's accesslog (`cn=accesslog`), as annal reads it. */
export interface AccesslogRecord {
  /** `reqStart`: the accesslog entry's own id and the moment of the change (generalized time). */
  readonly reqStart: string;
  /**
   * `reqEnd`: when slapd logged the write. slapd applies and logs writes one at a time and
   * stamps `reqEnd` as it logs each, so `reqEnd` orders the log as the writes were applied and
   * as they become visible; `reqStart`, stamped when the request arrived, does not (a write
   * received earlier may be logged later). Capture's place in the log is a `reqEnd`.
   */
  readonly reqEnd: string;
  readonly type: "add" | "modify" | "modrdn" | "delete";
  readonly dn: string;
  readonly entryUUID: string | undefined;
  /** `reqAuthzID`: who asked, with a `dn:` prefix removed; undefined for anonymous. */
  readonly actor: string | undefined;
  /** `reqMod`: the attribute changes (for an add: every value, as `add`). */
  readonly changes: readonly RawChange[];
  /**
   * `reqOld`'s lines (`attr: value`): the old values, the whole entry for a delete, the modified
   * attributes for a modify. Read into values only where a change needs them (`readOldValues`):
   * for a one-member change to a group of 100,000 members they are every member, which capture
   * does not need when it knows the entry's state.
   */
  readonly reqOld: readonly (string | Buffer)[];
  readonly newRDN?: string;
  readonly deleteOldRDN?: boolean;
  readonly newSuperior?: string;
}

/** A `reqMod` line before values are encoded: the value stays bytes until we know the syntax. */
export interface RawChange {
  readonly operation: AttributeChange["operation"];
  readonly attribute: string;
  readonly values: (string | Buffer)[];
}

export const ACCESSLOG_ATTRIBUTES = [
  "reqStart",
  "reqEnd",
  "reqType",
  "reqDN",
  "reqEntryUUID",
  "reqAuthzID",
  "reqMod",
  "reqOld",
  "reqNewRDN",
  "reqDeleteOldRDN",
  "reqNewSuperior",
  "reqResult",
] as const;

/** reqMod and reqOld carry values of any syntax, binary ones included: read them as bytes. */
export const ACCESSLOG_BINARY = ["reqMod", "reqOld"] as const;

const OPERATIONS: Record<string, AttributeChange["operation"]> = {
  "+": "add",
  "-": "delete",
  "=": "replace",
  "#": "increment",
};

const TYPES: Record<string, AccesslogRecord["type"]> = {
  add: "add",
  modify: "modify",
  modrdn: "modrdn",
  delete: "delete",
};

/** Turns an accesslog entry into a record, or undefined for what capture ignores. */
export function parseAccesslogEntry(entry: DirectoryEntry): AccesslogRecord | undefined {
  return runToEnd(accesslogRecordSlices(entry));
}

/**
 * `parseAccesslogEntry` with a turn of the event loop every `SLICE_VALUES` values: the add of
 * a group of 100,000 members is one record of 5.6 MB, 60 to 100 ms of decoding in one piece.
 */
export function readAccesslogEntry(entry: DirectoryEntry): Promise<AccesslogRecord | undefined> {
  return runInSlices(accesslogRecordSlices(entry));
}

function* accesslogRecordSlices(entry: DirectoryEntry): Slices<AccesslogRecord | undefined> {
  const text = (name: string) => {
    const value = entry.attributes[name]?.[0];
    return value === undefined
      ? undefined
      : Buffer.isBuffer(value)
        ? value.toString("utf8")
        : value;
  };
  const type = TYPES[text("reqType") ?? ""];
  const reqStart = text("reqStart");
  const dn = text("reqDN");
  if (!type || !reqStart || dn === undefined) return undefined;
  if ((text("reqResult") ?? "0") !== "0") return undefined;

  const changes = yield* mergedChanges(entry.attributes.reqMod ?? []);
  const authz = text("reqAuthzID");
  const newRDN = text("reqNewRDN");
  const newSuperior = text("reqNewSuperior");
  const deleteOldRDN = text("reqDeleteOldRDN");
  return {
    reqStart,
    // A log without reqEnd (never seen from OpenLDAP) still reads, ordered by reqStart.
    reqEnd: text("reqEnd") ?? reqStart,
    type,
    dn,
    entryUUID: text("reqEntryUUID"),
    actor: authz ? authz.replace(/^dn:/i, "") : undefined,
    changes,
    reqOld: entry.attributes.reqOld ?? [],
    ...(newRDN === undefined ? {} : { newRDN }),
    ...(deleteOldRDN === undefined ? {} : { deleteOldRDN: deleteOldRDN.toUpperCase() === "TRUE" }),
    ...(newSuperior === undefined ? {} : { newSuperior }),
  };
}

/**
 * The record's old values (`reqOld`) by attribute, as the log spelled the names, read a slice at
 * a time: a change to a group of 100,000 members has every member there.
 */
export function readOldValues(
  record: Pick<AccesslogRecord, "reqOld">,
): Promise<Record<string, (string | Buffer)[]>> {
  return runInSlices(oldValuesSlices(record.reqOld));
}

function* oldValuesSlices(
  lines: readonly (string | Buffer)[],
): Slices<Record<string, (string | Buffer)[]>> {
  const old: Record<string, (string | Buffer)[]> = {};
  const names = new LineNames();
  for (let i = 0; i < lines.length; i++) {
    if (i % SLICE_VALUES === SLICE_VALUES - 1) yield;
    const bytes = asBytes(lines[i]!);
    const colon = colonAt(bytes);
    if (colon <= 0) continue;
    const value = bytes.subarray(bytes[colon + 1] === 0x20 ? colon + 2 : colon + 1);
    (old[names.of(bytes, colon)] ??= []).push(value);
  }
  return old;
}

const asBytes = (line: string | Buffer): Buffer =>
  Buffer.isBuffer(line) ? line : Buffer.from(line, "utf8");

/** Where the line's first `:` is, or -1; attribute names are short, a scan finds it at once. */
function colonAt(bytes: Buffer): number {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0x3a) return i;
  return -1;
}

/**
 * Attribute names of consecutive lines: a line naming the same attribute as the line before
 * (byte for byte) takes its string, rather than a string and a view of its own made for each of
 * 100,000 lines of `member`.
 */
class LineNames {
  private bytes: Buffer | undefined;
  private end = 0;
  private name = "";

  /** The name that `bytes` holds before `end`. */
  of(bytes: Buffer, end: number): string {
    const last = this.bytes;
    if (last !== undefined && end === this.end) {
      let same = true;
      for (let i = 0; i < end; i++) {
        if (bytes[i] !== last[i]) {
          same = false;
          break;
        }
      }
      if (same) return this.name;
    }
    this.bytes = bytes;
    this.end = end;
    this.name = bytes.toString("utf8", 0, end);
    return this.name;
  }
}

/**
 * The `reqMod` lines as changes. Each is `<attribute>:<op> <value>` with op one of `+ - = #`;
 * `attr:-` and `attr:=` with no value delete or clear the attribute. The value is bytes: it may
 * be a JPEG. slapd writes one line per value; consecutive lines of one attribute and op are
 * one change.
 */
function* mergedChanges(lines: readonly (string | Buffer)[]): Slices<RawChange[]> {
  const merged: { operation: RawChange["operation"]; attribute: string; values: Buffer[] }[] = [];
  const names = new LineNames();
  for (let i = 0; i < lines.length; i++) {
    if (i % SLICE_VALUES === SLICE_VALUES - 1) yield;
    const bytes = asBytes(lines[i]!);
    const colon = colonAt(bytes);
    if (colon <= 0) continue;
    const operation = OPERATIONS[String.fromCharCode(bytes[colon + 1] ?? 0)];
    if (!operation) continue;
    const attribute = names.of(bytes, colon);
    const hasValue = bytes.length > colon + 2 && bytes[colon + 2] === 0x20;
    const last = merged.at(-1);
    if (
      hasValue &&
      last &&
      last.operation === operation &&
      last.values.length > 0 &&
      (last.attribute === attribute || last.attribute.toLowerCase() === attribute.toLowerCase())
    ) {
      last.values.push(bytes.subarray(colon + 3));
    } else {
      merged.push({ operation, attribute, values: hasValue ? [bytes.subarray(colon + 3)] : [] });
    }
  }
  return merged;
}

/** `20261122043500.123456Z` (generalized time, UTC) → Date (millisecond precision). */
export function parseGeneralizedTime(value: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?(?:[.,](\d+))?Z$/.exec(value);
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s, fraction] = match;
  const ms = fraction ? Math.floor(Number(`0.${fraction}`) * 1000) : 0;
  return new Date(Date.UTC(+y!, +mo! - 1, +d!, +h!, +mi!, +(s ?? 0), ms));
}

/** A Date as generalized time with microseconds, the form of `reqStart`. */
export function formatGeneralizedTime(date: Date): string {
  const iso = date.toISOString(); // 2026-11-22T04:35:00.123Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}.${iso.slice(20, 23)}000Z`;
}
