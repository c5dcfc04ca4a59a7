import { withSessionLock, withTransaction, type Pool, type Queryable } from "../db/index.ts";
import {
  and,
  eq,
  ge,
  identityAttributes,
  normalizeDN,
  rdnOf,
  type DirectoryEntry,
} from "../directory/index.ts";
import {
  entryStream,
  sortAttributes,
  touchedAttributes,
  type EntryState,
} from "../events/index.ts";
import type { LogPosition } from "../store/index.ts";
import { parseGeneralizedTime } from "./accesslog.ts";
import {
  formatADPlace,
  parseADPlace,
  readADController,
  text,
  type ADController,
  type ADPlace,
} from "./ad.ts";
import {
  parseReplMetadata,
  parseReplMetadataXml,
  parseReplValueMetadataXml,
  REPL_METADATA_ATTRIBUTE,
  REPL_METADATA_XML_ATTRIBUTE,
  REPL_VALUE_METADATA_XML_ATTRIBUTE,
  type AttributeMetadata,
  type ValueMetadata,
} from "./ad-metadata.ts";
import { changeBetween } from "./changes.ts";
import { notImported, readCaptureCheckpoint, writeCaptureCheckpoint } from "./checkpoints.ts";
import type { CaptureContext, CaptureResult } from "./context.ts";
import { recordIsolated } from "./failures.ts";
import { reconcileByPolling } from "./from-polling.ts";
import { claimWriteIntentNear, writeFingerprint } from "./intents.ts";
import { lastEntryState } from "./last-state.ts";
import { entryState, stateIdentity, type Normalizer } from "./normalize.ts";

/**
 * Capture from an Active Directory domain controller by `uSNChanged`: each pass reads the
 * objects under the base whose uSNChanged is past the checkpoint (a USN of the DC's), and the
 * tombstones under the domain's `CN=Deleted Objects` past it (Show Deleted), and records each
 * as the change from its state in the log, in the DC's USN order.
 *
 * Why uSNChanged and not DirSync (1.2.840.113556.1.4.841): DirSync needs the "Replicating
 * Directory Changes" right on the whole domain, searches only from a naming context's head, and
 * returns the changed attributes of an object, not the object: annal would still read each one
 * to know its state, and a linked attribute's values come partly. uSNChanged needs only read
 * access under the base, the state read is the object whole, and the USN checkpoint is the one
 * Microsoft documents ("Polling for Changes Using the USNChanged Attribute"). Both are one DC's
 * view; both show an object's latest state only.
 *
 * What annal can and cannot tell apart (AD keeps an object's latest state, no log of writes):
 * - Writes to one object between two passes that left different attributes are separate
 *   changes, each at its own time, in the DC's order: the object's replication metadata
 *   (`msDS-ReplAttributeMetaData`, or on Samba `replPropertyMetaData`: ad-metadata.ts) gives every attribute the USN and time of its
 *   last write. Each change holds the attributes whose last write it was; a rename or move is
 *   the write that changed `name`.
 * - A value a later write overwrote before the pass is gone: its write is seen only if it left
 *   another attribute, and the change shows the attribute as the later write left it.
 * - Linked attributes (a group's `member`) keep metadata per value: a Windows DC answers it as
 *   `msDS-ReplValueMetaData` (ad-metadata.ts), and each value added or removed between passes
 *   goes to the write of its own USN (at its time: the add's, the removal's), merged with the
 *   attribute writes of that USN, so a group's member adds and removes are one change each.
 *   A value added and removed again between passes left no state to show and is not recorded.
 *   Samba (4.17) answers no value metadata over LDAP (it keeps the stamps as extended-DN
 *   components, `RMD_LOCAL_USN` and the like, which its LDAP server does not show, with the
 *   extended DN, reveal-internals and show-deactivated-link controls alike): there, what the
 *   linked attributes' writes left is one change at the object's uSNChanged and whenChanged,
 *   said once in the log (debug) per database and DC.
 * - An object added and changed between two passes is one add of its latest state.
 * - An object deleted before a pass saw it was never in the log, and its tombstone is skipped;
 *   an object moved out of the base is not seen until its delete.
 * - A container renamed or moved moves the objects below it with no write of theirs (their
 *   uSNChanged stays): each is read below the container's new DN and recorded moved, at the
 *   container's write (`movedBelow`).
 * - No author: AD records none. The change's actor is null, except a write annal made, which
 *   keeps its note's cause (`claimWriteIntentNear`).
 *
 * A checkpoint of another DC (another invocationId: a different DC, or this one restored)
 * says nothing of this DC's USNs: the pass then compares every entry (`reconcileByPolling`),
 * says so in the log, and goes on from this DC's highestCommittedUSN read before it.
 *
 * One pass at a time, across processes (a session advisory lock), as poll's: two passes that
 * read one object at different moments must not both record a change from the log's state.
 * A pass holds what it read in memory, to record it in USN order: what changed since the last
 * pass (after a long stop, that can be much of the directory).
 */
export async function captureFromAD(
  context: CaptureContext,
  options: { pageSize?: number } = {},
): Promise<CaptureResult> {
  return withSessionLock(context.pool, AD_LOCK, async () => {
    const stored = await readCaptureCheckpoint(context.pool, "ad");
    if (stored === undefined) throw notImported("ad");
    const checkpoint = parseADPlace(stored);
    // Read before the searches, as the checkpoint to go on from: a write after it is read
    // again by the next pass, and recorded once (its key, and a state compared to itself).
    const dc = await readADController(context);
    if (!checkpoint || checkpoint.invocationId !== dc.invocationId) {
      context.log.warn(
        { checkpoint: stored, invocationId: dc.invocationId, highestCommittedUSN: String(dc.usn) },
        "the checkpoint's USNs are not this domain controller's (another DC, or this one restored from a backup: another invocationId): comparing every entry with the log, then going on from this DC's highestCommittedUSN",
      );
      const reconciled = await reconcileByPolling(context);
      await writeCaptureCheckpoint(context.pool, "ad", formatADPlace(dc));
      return reconciled;
    }
    const read = await readChanged(context, checkpoint, dc, options.pageSize ?? 1000);
    const result = await recordChanges(context, checkpoint, read);
    await writeCaptureCheckpoint(context.pool, "ad", formatADPlace(dc));
    if (result.recorded > 0)
      context.log.debug({ recorded: result.recorded }, "captured AD changes");
    return result;
  });
}

/** The session advisory lock AD passes take, one at a time. */
const AD_LOCK = "annal:capture:ad";

/** The DC's place, for the checkpoint of a first import. */
export async function adHead(context: Pick<CaptureContext, "directory">): Promise<string> {
  return formatADPlace(await readADController(context));
}

/** An object read by a pass: live (its entry) or a tombstone. */
type Observed =
  | {
      readonly kind: "live";
      readonly entry: DirectoryEntry;
      readonly metadata: readonly AttributeMetadata[] | undefined;
      /** Linked attributes' per-value metadata, where the DC answers it (Windows). */
      readonly values: readonly ValueMetadata[] | undefined;
    }
  | {
      readonly kind: "deleted";
      readonly uuid: string;
      readonly usn: bigint;
      readonly at: Date | undefined;
    };

/**
 * What changed past the checkpoint: the live objects under the base, and the tombstones of
 * the domain. USNs in the filter are written from the number (`uSNChanged>=4013`), and AD
 * compares them as integers.
 */
async function readChanged(
  context: CaptureContext,
  checkpoint: ADPlace,
  dc: ADController,
  pageSize: number,
): Promise<Observed[]> {
  const { directory, normalizer } = context;
  const since = ge("uSNChanged", String(checkpoint.usn + 1n));
  const observed: Observed[] = [];
  for await (const page of directory.search(context.base, {
    scope: "sub",
    filter: since,
    attributes: [
      "*",
      "+",
      "uSNChanged",
      "uSNCreated",
      "whenChanged",
      REPL_METADATA_ATTRIBUTE,
      REPL_METADATA_XML_ATTRIBUTE,
      REPL_VALUE_METADATA_XML_ATTRIBUTE,
      ...identityAttributes(normalizer.identity),
    ],
    binaryAttributes: [...normalizer.schema.binaryAttributes(), REPL_METADATA_ATTRIBUTE],
    pageSize,
  })) {
    for (const entry of page) {
      // Metadata is not the entry's: it is taken out before the entry becomes a state.
      const attributes: DirectoryEntry["attributes"] = {};
      let xml: readonly (string | Buffer)[] | undefined;
      let blob: string | Buffer | undefined;
      let valueXml: readonly (string | Buffer)[] = [];
      for (const [name, values] of Object.entries(entry.attributes)) {
        const lower = name.toLowerCase();
        if (lower === REPL_METADATA_XML_ATTRIBUTE.toLowerCase()) xml = values;
        else if (lower === REPL_METADATA_ATTRIBUTE.toLowerCase()) blob = values[0];
        else if (lower === REPL_VALUE_METADATA_XML_ATTRIBUTE.toLowerCase()) valueXml = values;
        else attributes[name] = values;
      }
      observed.push({
        kind: "live",
        entry: { ...entry, attributes },
        metadata:
          xml && xml.length > 0
            ? parseReplMetadataXml(xml.map(String))
            : Buffer.isBuffer(blob)
              ? parseReplMetadata(blob)
              : undefined,
        values: valueXml.length > 0 ? parseReplValueMetadataXml(valueXml.map(String)) : undefined,
      });
    }
  }
  for await (const page of directory.search(dc.deletedObjects, {
    scope: "sub",
    filter: and(eq("isDeleted", "TRUE"), since),
    attributes: ["objectGUID", "uSNChanged", "whenChanged"],
    binaryAttributes: ["objectGUID"],
    showDeleted: true,
    pageSize,
  })) {
    for (const entry of page) {
      const uuid = stateIdentity({ identity: "objectGUID" }, entryState(normalizer, entry));
      const usn = text(entry, "uSNChanged");
      if (!uuid || !usn || !/^\d+$/.test(usn)) continue;
      observed.push({ kind: "deleted", uuid, usn: BigInt(usn), at: whenChanged(entry) });
    }
  }
  return observed;
}

/** One change to record: an object's state after one of its writes, at that write's USN. */
interface Step {
  readonly uuid: string;
  readonly usn: bigint;
  readonly at: Date;
  readonly dn: string;
  readonly before: EntryState | null;
  readonly after: EntryState | null;
  /** The writes AD's metadata shows for the object since the checkpoint. */
  readonly writes: number;
}

/**
 * Records every object's changes, all in USN order, in one transaction: a pass that fails
 * records nothing, and the next reads the same again.
 */
async function recordChanges(
  context: CaptureContext,
  checkpoint: ADPlace,
  observed: readonly Observed[],
): Promise<CaptureResult> {
  const { normalizer } = context;
  return withTransaction(context.pool, async (tx) => {
    const steps: Step[] = [];
    for (const object of observed) {
      if (object.kind === "deleted") {
        const previous = await lastEntryState(tx, entryStream(object.uuid));
        // Never in the log (added and deleted between passes, or outside the base), or
        // recorded deleted already.
        if (!previous.state) continue;
        steps.push({
          uuid: object.uuid,
          usn: object.usn,
          at: object.at ?? new Date(),
          dn: previous.state.dn,
          before: previous.state,
          after: null,
          writes: 1,
        });
        continue;
      }
      const after = entryState(normalizer, object.entry);
      const uuid = stateIdentity(normalizer, after);
      const usn = text(object.entry, "uSNChanged");
      if (!uuid || !usn || !/^\d+$/.test(usn)) continue;
      const previous = await lastEntryState(tx, entryStream(uuid));
      const write = {
        uuid,
        before: previous.state,
        after,
        usn: BigInt(usn),
        at: whenChanged(object.entry) ?? new Date(),
        metadata: object.metadata,
        values: object.values,
        since: checkpoint.usn,
      };
      if (previous.state && linkedWritesUnsplit(write)) sayUnsplitOnce(context, checkpoint);
      steps.push(...writesOf(normalizer, write));
    }
    const stepped = new Set(steps.map((step) => step.uuid));
    for (const step of [...steps]) {
      if (step.before && step.after && step.before.dn !== step.after.dn) {
        steps.push(...(await movedBelow(context, tx, step, stepped)));
      }
    }
    // Stable: what a container's rename moved comes after the rename, at its USN.
    steps.sort((a, b) => (a.usn < b.usn ? -1 : a.usn > b.usn ? 1 : 0));
    let recorded = 0;
    let position: LogPosition | undefined;
    for (const step of steps) {
      const changeId = `${checkpoint.invocationId}:${step.usn}:${step.uuid}`;
      const appended = await recordIsolated(
        tx,
        context,
        { source: "ad", changeId, dn: step.dn, entryUUID: step.uuid },
        async () => {
          const built = changeBetween(step.uuid, step.before, step.after);
          if (!built) return undefined;
          const { change } = built;
          const cause = await claimWriteIntentNear(tx, {
            dns: [change.oldDn ?? change.dn, change.dn],
            fingerprint:
              change.changeType === "modify"
                ? { kind: "modify", attributes: change.attributes }
                : change.changeType === "modrdn"
                  ? writeFingerprint({ kind: "modrdn", newRDN: rdnOf(change.dn) })
                  : writeFingerprint({ kind: change.changeType }),
            at: step.at,
          });
          return context.store.appendToStream(
            entryStream(step.uuid),
            [
              {
                type: built.eventType,
                data: change,
                occurredAt: step.at,
                metadata: {
                  actor: null,
                  source: "ad",
                  usn: String(step.usn),
                  ...(step.writes > 1 ? { writes: step.writes } : {}),
                  ...(cause ?? {}),
                },
                // A USN names one write of this DC, and the write one state of the object: the
                // same change read twice has the same key, two changes never share one.
                idempotencyKey: `ad:${changeId}`,
              },
            ],
            { tx },
          );
        },
      );
      if (!appended || appended.appended === 0) continue;
      recorded += appended.appended;
      position = appended.events[0];
    }
    return { recorded, ...(position ? { position } : {}) };
  });
}

/**
 * The objects below a renamed or moved container, each moved with it by the container's write
 * (AD writes nothing of theirs: their uSNChanged stays), as changes of their DN at that write's
 * USN and time, read from the container's new place. Objects that have a change of their own in
 * the pass (`stepped`) are left to it.
 */
async function movedBelow(
  context: CaptureContext,
  tx: Queryable,
  container: Step,
  stepped: Set<string>,
): Promise<Step[]> {
  const { directory, normalizer } = context;
  const moved: Step[] = [];
  for await (const page of directory.search(container.dn, {
    scope: "sub",
    attributes: ["*", "+", ...identityAttributes(normalizer.identity)],
    binaryAttributes: normalizer.schema.binaryAttributes(),
  })) {
    for (const entry of page) {
      const after = entryState(normalizer, entry);
      const uuid = stateIdentity(normalizer, after);
      if (!uuid || stepped.has(uuid)) continue;
      const previous = await lastEntryState(tx, entryStream(uuid));
      if (!previous.state || previous.state.dn === after.dn) continue;
      stepped.add(uuid);
      moved.push({
        uuid,
        usn: container.usn,
        at: container.at,
        dn: after.dn,
        before: previous.state,
        after,
        writes: 1,
      });
    }
  }
  return moved;
}

/** An object as a pass read it, with what AD's metadata says of its writes since `since`. */
interface ObjectWrites {
  readonly uuid: string;
  readonly before: EntryState | null;
  readonly after: EntryState;
  /** Its uSNChanged and whenChanged: its last write. */
  readonly usn: bigint;
  readonly at: Date;
  readonly metadata: readonly AttributeMetadata[] | undefined;
  readonly values?: readonly ValueMetadata[] | undefined;
  readonly since: bigint;
}

/**
 * An object's writes since the checkpoint, as states from `before` (the log's) to `after`
 * (read now), one a write its metadata shows: the attributes grouped by the USN of their last
 * write (`replPropertyMetaData` or `msDS-ReplAttributeMetaData`), and each value of a linked
 * attribute added or removed at the USN of its own last write (`msDS-ReplValueMetaData`), the
 * states chained in USN order. A difference no metadata explains (a linked attribute's values
 * where the DC answers no value metadata; an attribute its metadata does not name) goes to the
 * attribute's last write, else the object's, at its uSNChanged and whenChanged; the DN's change
 * to the write that changed `name`.
 */
export function writesOf(
  normalizer: Pick<Normalizer, "schema" | "typeOf">,
  object: ObjectWrites,
): Step[] {
  const { uuid, before, after } = object;
  const groups = new Map<bigint, { at: Date; names: Set<string> }>();
  const groupAt = (usn: bigint, at: Date) => {
    let group = groups.get(usn);
    if (!group) groups.set(usn, (group = { at, names: new Set() }));
    if (at > group.at) group.at = at;
    return group;
  };
  const canonical = (known: string | undefined, name: string | undefined) =>
    (known && (normalizer.schema.canonical(known) ?? name))?.toLowerCase();
  for (const attribute of object.metadata ?? []) {
    if (attribute.localUsn <= object.since) continue;
    const group = groupAt(attribute.localUsn, attribute.changedAt);
    const name = canonical(attribute.name ?? attribute.oid, attribute.name);
    if (name) group.names.add(name);
  }
  // The linked attributes the DC gives value metadata of, with the stamps of the values written
  // since the checkpoint, by DN.
  const linked = new Map<string, Map<string, ValueMetadata>>();
  for (const value of object.values ?? []) {
    const name = canonical(value.attribute, value.attribute);
    if (!name) continue;
    let stamps = linked.get(name);
    if (!stamps) linked.set(name, (stamps = new Map()));
    if (value.localUsn <= object.since) continue;
    groupAt(value.localUsn, value.deletedAt ?? value.changedAt);
    const key = dnKey(value.dn);
    const known = stamps.get(key);
    if (!known || known.localUsn < value.localUsn) stamps.set(key, value);
  }
  // A uSNChanged past every write the metadata shows is a write of linked values (`member`)
  // whose per-value metadata the DC did not give.
  const writes = groups.size + (groups.has(object.usn) ? 0 : 1);
  if (!before) {
    return [{ uuid, usn: object.usn, at: object.at, dn: after.dn, before, after, writes }];
  }
  if (!groups.has(object.usn)) groups.set(object.usn, { at: object.at, names: new Set() });
  const last = object.usn;
  const ordered = [...groups.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const groupOf = (name: string): bigint => {
    for (const [usn, group] of ordered) if (group.names.has(name.toLowerCase())) return usn;
    return last;
  };
  const assigned = new Map<bigint, Written[]>();
  // Pushed, not spread: a bulk member change between passes assigns thousands of values.
  const assign = (usn: bigint, written: Written) => {
    const list = assigned.get(usn);
    if (list) list.push(written);
    else assigned.set(usn, [written]);
  };
  for (const name of touchedAttributes(before, after)) {
    const stamps = linked.get(name.toLowerCase());
    if (!stamps) {
      assign(groupOf(name), { name });
      continue;
    }
    const was = before.attributes[name] ?? [];
    const now = after.attributes[name] ?? [];
    const wasSet = new Set(was);
    const nowSet = new Set(now);
    let moved = false;
    for (const value of now) {
      if (wasSet.has(value)) continue;
      const stamp = stamps.get(dnKey(value));
      moved = true;
      assign(stamp && !stamp.deletedAt ? stamp.localUsn : groupOf(name), { name, add: value });
    }
    for (const value of was) {
      if (nowSet.has(value)) continue;
      const stamp = stamps.get(dnKey(value));
      moved = true;
      assign(stamp?.deletedAt ? stamp.localUsn : groupOf(name), { name, remove: value });
    }
    // The same values in another order: the attribute as a whole.
    if (!moved) assign(groupOf(name), { name });
  }
  const renamedAt = before.dn === after.dn ? undefined : groupOf("name");
  const steps: Step[] = [];
  let state = before;
  for (const [usn, group] of ordered) {
    const written = assigned.get(usn) ?? [];
    if (written.length === 0 && renamedAt !== usn) continue;
    const attributes = { ...state.attributes };
    for (const name of new Set(written.map((w) => w.name))) {
      const values = afterWrites(
        attributes[name] ?? [],
        after.attributes[name],
        written.filter((w) => w.name === name),
      );
      if (values === undefined) delete attributes[name];
      else attributes[name] = values;
    }
    const dn = renamedAt === usn ? after.dn : state.dn;
    const next: EntryState = {
      dn,
      type: normalizer.typeOf(dn, attributes),
      attributes: sortAttributes(attributes),
      operational: after.operational,
    };
    steps.push({ uuid, usn, at: group.at, dn, before: state, after: next, writes });
    state = next;
  }
  return steps;
}

/** What one write did to one attribute: left it as it is now, or added or removed a value. */
type Written =
  | { readonly name: string; readonly add?: undefined; readonly remove?: undefined }
  | { readonly name: string; readonly add: string; readonly remove?: undefined }
  | { readonly name: string; readonly add?: undefined; readonly remove: string };

/**
 * An attribute's values after one write's `written`, from `current`: as `now` (the values read)
 * for a write of the whole attribute; else `current` with the values added and removed, in
 * `now`'s order, then the values `now` no longer has (a later write removes them), so the last
 * write leaves the attribute exactly as read. Undefined: no values.
 */
function afterWrites(
  current: readonly string[],
  now: readonly string[] | undefined,
  written: readonly Written[],
): string[] | undefined {
  if (written.some((w) => w.add === undefined && w.remove === undefined)) {
    return now && [...now];
  }
  const values = new Set(current);
  for (const w of written) {
    if (w.add !== undefined) values.add(w.add);
    else if (w.remove !== undefined) values.delete(w.remove);
  }
  const kept = (now ?? []).filter((value) => values.has(value));
  const inNow = new Set(now);
  for (const value of current) if (values.has(value) && !inNow.has(value)) kept.push(value);
  return kept.length > 0 ? kept : undefined;
}

/** A DN as value metadata and an attribute's values are matched by. */
function dnKey(dn: string): string {
  try {
    return normalizeDN(dn);
  } catch {
    return dn.toLowerCase();
  }
}

/**
 * Whether an object's last write is one of linked values the DC gave no value metadata of
 * (its uSNChanged past every attribute's last write, and no `msDS-ReplValueMetaData`): its
 * linked values' changes since the last pass are then one change.
 */
function linkedWritesUnsplit(object: ObjectWrites): boolean {
  return (
    object.metadata !== undefined &&
    (object.values === undefined || object.values.length === 0) &&
    object.usn > object.since &&
    !object.metadata.some((attribute) => attribute.localUsn === object.usn)
  );
}

/** The DCs (by invocationId) each database's passes have said it of: once each. */
const toldUnsplit = new WeakMap<Pool, Set<string>>();

function sayUnsplitOnce(context: CaptureContext, checkpoint: ADPlace): void {
  let told = toldUnsplit.get(context.pool);
  if (!told) toldUnsplit.set(context.pool, (told = new Set()));
  if (told.has(checkpoint.invocationId)) return;
  told.add(checkpoint.invocationId);
  context.log.debug(
    { invocationId: checkpoint.invocationId },
    "the domain controller answers no msDS-ReplValueMetaData (Samba does not): a linked attribute's values (a group's members) added and removed between two passes are one change, at the object's whenChanged",
  );
}

function whenChanged(entry: DirectoryEntry): Date | undefined {
  const value = text(entry, "whenChanged");
  return value ? parseGeneralizedTime(value) : undefined;
}
