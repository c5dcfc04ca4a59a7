import type { DirectoryEntry } from "../directory/index.ts";
import { entryIdentity, type IdentitySetting } from "../directory/index.ts";
import type { DirectorySchema } from "../directory/index.ts";
import type { AttributeMap, EntryState } from "../events/index.ts";
import { NameSet, sortAttributes } from "../events/index.ts";
import { runToEnd, SLICE_VALUES, type Slices } from "../slices.ts";
import { storableText } from "./stored-value.ts";

/** What turns a directory entry into the state the log records. */
export interface Normalizer {
  readonly schema: DirectorySchema;
  /** Attributes whose values never enter the log. */
  readonly redact: NameSet;
  /** The entry's configured type from its DN and user attributes (null for none). */
  readonly typeOf: (dn: string, attributes: AttributeMap) => string | null;
  /** Which of the server's attributes is an entry's identity (`[directory] identity`). */
  readonly identity: IdentitySetting;
}

/**
 * The entry's identity (`entryIdentity`) from its state, or undefined when it has none: such
 * an entry cannot be recorded.
 */
export function stateIdentity(
  normalizer: Pick<Normalizer, "identity">,
  state: Pick<EntryState, "attributes" | "operational">,
): string | undefined {
  return entryIdentity(
    normalizer.identity,
    (name) =>
      state.operational[name] ??
      state.attributes[name] ??
      valuesByName(state.operational, name) ??
      valuesByName(state.attributes, name),
  );
}

function valuesByName(map: AttributeMap, name: string): readonly string[] | undefined {
  const lower = name.toLowerCase();
  for (const key of Object.keys(map)) if (key.toLowerCase() === lower) return map[key];
  return undefined;
}

/** The canonical name of an attribute (`commonName` → `cn`; unknown names kept as given). */
export function canonicalName(schema: DirectorySchema, name: string): string {
  const [base, ...options] = name.split(";");
  const canonical = schema.canonical(base ?? name) ?? base ?? name;
  const kept = options.filter((o) => o.toLowerCase() !== "binary");
  return [canonical, ...kept].join(";");
}

/**
 * One value as the log stores it: bytes of a binary attribute as base64, text as it is
 * unless jsonb cannot hold it (see `storableText`).
 */
export function encodeValue(schema: DirectorySchema, name: string, value: string | Buffer): string {
  return encodeKnownValue(schema.isBinary(name), value);
}

function encodeKnownValue(binary: boolean, value: string | Buffer): string {
  if (Buffer.isBuffer(value)) {
    return binary ? value.toString("base64") : storableText(value.toString("utf8"));
  }
  return storableText(value);
}

/** What the schema and configuration say of an attribute name as the directory spelled it. */
interface KnownName {
  readonly name: string;
  readonly redacted: boolean;
  readonly operational: boolean;
  readonly binary: boolean;
}

/**
 * Each normalizer's answers by raw name: a directory spells the same few dozen names on every
 * entry, and an import asks for each of them a hundred thousand times.
 */
const knownNames = new WeakMap<Normalizer, Map<string, KnownName>>();

function namesOf(normalizer: Normalizer): Map<string, KnownName> {
  let names = knownNames.get(normalizer);
  if (!names) {
    names = new Map();
    knownNames.set(normalizer, names);
  }
  return names;
}

/**
 * Splits raw attribute values into user and operational maps under canonical names, with
 * binary values in base64 and redacted attributes left out. Returns the names of the redacted
 * attributes it found, so a change can say they changed.
 */
export function splitAttributes(
  normalizer: Normalizer,
  raw: Record<string, readonly (string | Buffer)[]>,
): { attributes: AttributeMap; operational: AttributeMap; redacted: string[] } {
  return runToEnd(splitAttributesSlices(normalizer, raw));
}

/** `splitAttributes` as sliced work (`src/slices.ts`): a pause every `SLICE_VALUES` values. */
export function* splitAttributesSlices(
  normalizer: Normalizer,
  raw: Record<string, readonly (string | Buffer)[]>,
): Slices<{ attributes: AttributeMap; operational: AttributeMap; redacted: string[] }> {
  const attributes: AttributeMap = {};
  const operational: AttributeMap = {};
  const redacted: string[] = [];
  const names = namesOf(normalizer);
  for (const rawName of Object.keys(raw)) {
    const values = raw[rawName]!;
    let known = names.get(rawName);
    if (!known) {
      const name = canonicalName(normalizer.schema, rawName);
      known = {
        name,
        redacted: normalizer.redact.has(name),
        operational: normalizer.schema.isOperational(name),
        binary: normalizer.schema.isBinary(name),
      };
      names.set(rawName, known);
    }
    const { name } = known;
    if (known.redacted) {
      redacted.push(name);
      continue;
    }
    const target = known.operational ? operational : attributes;
    const encoded: string[] = new Array(values.length);
    for (let i = 0; i < values.length; i++) {
      encoded[i] = encodeKnownValue(known.binary, values[i]!);
      if (i % SLICE_VALUES === SLICE_VALUES - 1) yield;
    }
    const before = target[name];
    target[name] = before ? [...before, ...encoded] : encoded;
  }
  return {
    attributes: sortAttributes(attributes),
    operational: sortAttributes(operational),
    redacted: [...new Set(redacted)].sort(),
  };
}

/** A directory entry (read with `*` and `+`) as an EntryState. */
export function entryState(normalizer: Normalizer, entry: DirectoryEntry): EntryState {
  return runToEnd(entryStateSlices(normalizer, entry));
}

/**
 * `entryState` as sliced work: a group of 100,000 members took 12 ms to normalise in one
 * piece (an import's snapshot of it, `importEntries`).
 */
export function* entryStateSlices(
  normalizer: Normalizer,
  entry: DirectoryEntry,
): Slices<EntryState> {
  const { attributes, operational } = yield* splitAttributesSlices(normalizer, entry.attributes);
  return { dn: entry.dn, type: normalizer.typeOf(entry.dn, attributes), attributes, operational };
}
