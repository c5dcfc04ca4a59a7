import { setImmediate as turn } from "node:timers/promises";
import { parentDN, parseDN } from "../directory/index.ts";
import { readOldValues, type AccesslogRecord, type RawChange } from "./accesslog.ts";
import {
  ENTRY_EVENT,
  type AttributeMap,
  type ChangeType,
  type EntryChange,
  type EntryState,
} from "../events/index.ts";
import {
  canonicalName,
  encodeValue,
  splitAttributesSlices,
  stateIdentity,
  type Normalizer,
} from "./normalize.ts";
import { runInSlices, SLICE_VALUES, type Slices } from "../slices.ts";
import {
  applyChanges,
  patchBetween,
  sameAttributes,
  touchedAttributes,
  type AttributeChange,
} from "../events/index.ts";

const EVENT_OF: Record<ChangeType, string> = {
  add: ENTRY_EVENT.added,
  modify: ENTRY_EVENT.modified,
  modrdn: ENTRY_EVENT.renamed,
  delete: ENTRY_EVENT.deleted,
};

export interface BuiltChange {
  readonly eventType: string;
  readonly change: EntryChange;
}

/**
 * The change an accesslog record describes, given the entry's state as the log knows it
 * (`before`, null when the log has never seen the entry: then the record's old values stand
 * in for it). The after-state is the before-state with the record's changes applied, so a
 * change is recorded exactly as the directory applied it, whatever happened since.
 */
export async function changeFromAccesslog(
  normalizer: Normalizer,
  record: AccesslogRecord,
  known: EntryState | null,
): Promise<BuiltChange | undefined> {
  // Values are encoded a slice at a time: a group's add holds every member.
  const { user, operational, redacted } = await runInSlices(
    encodeChanges(normalizer, record.changes),
  );
  // The record's old values are read only where the change needs them: for a one-member
  // change to a group of 100,000 members they are every member.
  let oldValues: Promise<Record<string, (string | Buffer)[]>> | undefined;
  const readOld = () => (oldValues ??= readOldValues(record));
  const fromOld = async () => stateFrom(normalizer, record.dn, await readOld());
  let before: EntryState | null;
  let after: EntryState | null;
  switch (record.type) {
    case "add":
      before = null;
      after = withType(normalizer, {
        dn: record.dn,
        attributes: applyChanges({}, user),
        operational: applyChanges({}, operational),
      });
      break;
    case "modify": {
      let attributes: AttributeMap;
      if (known) {
        // Applied once: for a group of 100,000 members each application is a pass over them.
        const applied = applyChanges(known.attributes, user);
        const held = await heldAlready(known, applied, user, readOld, fromOld);
        before = held ?? known;
        attributes = held ? applyChanges(held.attributes, user) : applied;
      } else {
        before = await fromOld();
        attributes = applyChanges(before.attributes, user);
      }
      after = withType(normalizer, {
        dn: before.dn,
        attributes,
        operational: applyChanges(before.operational, operational),
      });
      break;
    }
    case "modrdn": {
      before = known ?? (await fromOld());
      const newRDN = record.newRDN;
      if (!newRDN) return undefined;
      const superior = record.newSuperior ?? parentDN(record.dn);
      const dn = superior ? `${newRDN},${superior}` : newRDN;
      const rdnChanges = renameChanges(normalizer, record.dn, newRDN, record.deleteOldRDN ?? true);
      after = withType(normalizer, {
        dn,
        attributes: applyChanges(applyChanges(before.attributes, rdnChanges), user),
        operational: applyChanges(before.operational, operational),
      });
      break;
    }
    case "delete":
      before = known ?? (await fromOld());
      after = null;
      break;
  }
  const entryUUID =
    record.entryUUID ??
    (after && stateIdentity(normalizer, after)) ??
    (before && stateIdentity(normalizer, before));
  if (!entryUUID) return undefined;
  // A large entry's passes over its values (the change applied above, the patch, the
  // attributes it touched) each have a turn of the event loop of their own.
  const large = holdsManyValues(before) || holdsManyValues(after);
  if (large) await turn();
  const patch = patchBetween(before, after);
  if (large) await turn();
  const touched = new Set([
    ...touchedAttributes(before, after),
    ...user.map((c) => c.attribute),
    ...redacted,
  ]);
  return {
    eventType: EVENT_OF[record.type],
    change: {
      entryUUID: entryUUID.toLowerCase(),
      changeType: record.type,
      dn: after?.dn ?? record.dn,
      ...(record.type === "modrdn" ? { oldDn: record.dn } : {}),
      before,
      after,
      patch,
      attributes: [...touched].sort(),
      redacted,
    },
  };
}

/** Whether an attribute of `state` has more values than a slice (`SLICE_VALUES`). */
function holdsManyValues(state: EntryState | null): boolean {
  if (!state) return false;
  for (const values of Object.values(state.attributes)) {
    if (values.length > SLICE_VALUES) return true;
  }
  return false;
}

/**
 * The state before a logged modify that the log's state already holds: an import or snapshot
 * read the entry after the write and before capture reached its record (a write in the first
 * seconds of a first start, or during a periodic snapshot). Applied to `known`, the write
 * changes nothing, so it would be recorded as touching its attributes with an empty patch,
 * and a history built from the changes' patches would never see the values it replaced. The
 * record's old values (`reqOld`) say what they were: `known` with those values, when the
 * write applied to that gives `known` again (`applied`: the write applied to `known`).
 * Undefined when the write is not held already, or the record has no old values to tell (an
 * accesslog without `logold`).
 */
async function heldAlready(
  known: EntryState,
  applied: AttributeMap,
  user: readonly AttributeChange[],
  readOld: () => Promise<Record<string, unknown[]>>,
  fromOld: () => Promise<EntryState>,
): Promise<EntryState | undefined> {
  if (user.length === 0 || !sameAttributes(applied, known.attributes)) return undefined;
  if (Object.keys(await readOld()).length === 0) return undefined;
  const old = (await fromOld()).attributes;
  const attributes: Record<string, string[]> = { ...known.attributes };
  for (const { attribute } of user) {
    if (old[attribute]) attributes[attribute] = [...old[attribute]];
    else delete attributes[attribute];
  }
  if (sameAttributes(attributes, known.attributes)) return undefined;
  if (!sameAttributes(applyChanges(attributes, user), known.attributes)) return undefined;
  return { ...known, attributes };
}

/** The change between two observed states of one entry (polling, reconciliation). */
export function changeBetween(
  entryUUID: string,
  before: EntryState | null,
  after: EntryState | null,
): BuiltChange | undefined {
  let changeType: ChangeType;
  if (!before && after) changeType = "add";
  else if (before && !after) changeType = "delete";
  else if (before && after && before.dn !== after.dn) changeType = "modrdn";
  else if (before && after && !sameAttributes(before.attributes, after.attributes)) {
    changeType = "modify";
  } else return undefined;
  return {
    eventType: EVENT_OF[changeType],
    change: {
      entryUUID: entryUUID.toLowerCase(),
      changeType,
      dn: (after ?? before)!.dn,
      ...(changeType === "modrdn" ? { oldDn: before!.dn } : {}),
      before,
      after,
      patch: patchBetween(before, after),
      attributes: touchedAttributes(before, after),
      redacted: [],
      observed: true,
    },
  };
}

function* encodeChanges(
  normalizer: Normalizer,
  changes: readonly RawChange[],
): Slices<{ user: AttributeChange[]; operational: AttributeChange[]; redacted: string[] }> {
  const user: AttributeChange[] = [];
  const operational: AttributeChange[] = [];
  const redacted = new Set<string>();
  for (const change of changes) {
    const attribute = canonicalName(normalizer.schema, change.attribute);
    if (normalizer.redact.has(attribute)) {
      redacted.add(attribute);
      continue;
    }
    const values: string[] = new Array(change.values.length);
    for (let i = 0; i < values.length; i++) {
      values[i] = encodeValue(normalizer.schema, attribute, change.values[i]!);
      if (i % SLICE_VALUES === SLICE_VALUES - 1) yield;
    }
    const target = normalizer.schema.isOperational(attribute) ? operational : user;
    target.push({ operation: change.operation, attribute, values });
  }
  return { user, operational, redacted: [...redacted].sort() };
}

/** The attribute changes a rename implies: the new RDN's values added, the old one's removed. */
function renameChanges(
  normalizer: Normalizer,
  oldDN: string,
  newRDN: string,
  deleteOldRDN: boolean,
): AttributeChange[] {
  const newValues = parseDN(newRDN)[0] ?? [];
  const oldValues = parseDN(oldDN)[0] ?? [];
  const name = (type: string) => canonicalName(normalizer.schema, type);
  const changes: AttributeChange[] = newValues.map((ava) => ({
    operation: "add",
    attribute: name(ava.type),
    values: [ava.value],
  }));
  if (deleteOldRDN) {
    for (const ava of oldValues) {
      const kept = newValues.some(
        (n) => name(n.type) === name(ava.type) && n.value.toLowerCase() === ava.value.toLowerCase(),
      );
      if (!kept)
        changes.push({ operation: "delete", attribute: name(ava.type), values: [ava.value] });
    }
  }
  return changes;
}

/** The entry's state as the record's old values (`reqOld`) tell it, made a slice at a time. */
async function stateFrom(
  normalizer: Normalizer,
  dn: string,
  raw: Record<string, (string | Buffer)[]>,
): Promise<EntryState> {
  const { attributes, operational } = await runInSlices(splitAttributesSlices(normalizer, raw));
  return withType(normalizer, { dn, attributes, operational });
}

function withType(normalizer: Normalizer, state: Omit<EntryState, "type">): EntryState {
  return { ...state, type: normalizer.typeOf(state.dn, state.attributes) };
}
