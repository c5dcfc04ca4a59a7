import { runInSlices, runToEnd, type Slices } from "../slices.ts";

/**
 * An event's JSON text for a COPY (`copyEvents`): one string, or, for a value that holds many
 * array elements (a snapshot of a group of 400,000 members), its text in pieces with their
 * length in bytes, so that the whole text is never held at once. Either way the same JSON as
 * `JSON.stringify`: a piece is made by `JSON.stringify` of a primitive, or of anything that is
 * not a plain array or object, and plain arrays and objects are spelled as it spells them.
 *
 * @example
 * jsonText({ a: [1, 2] })                      // '{"a":[1,2]}'
 * jsonText({ member: bigList })                // { bytes: 18_400_021, pieces: () => … }
 */
export type JsonText = string | JsonPieces;

export interface JsonPieces {
  /** The text's length in UTF-8 bytes. */
  readonly bytes: number;
  /** The text, piece by piece, made afresh on each call. */
  pieces(): Iterable<string>;
}

/** From how many array elements and object keys a value's text is made in pieces. */
const PIECES_FROM = 10_000;
/** About how many characters a piece holds. */
const PIECE_LENGTH = 16_384;
/**
 * About how many characters of text are made between two turns of the event loop: 256 KiB
 * of a group's members took 1 to 2 ms here.
 */
const SLICE_CHARACTERS = 256 * 1024;

export function jsonText(value: unknown): JsonText {
  return runToEnd(jsonTextSlices(value));
}

/**
 * `jsonText` as sliced work (`src/slices.ts`): a large value's length is counted a slice of
 * about `SLICE_CHARACTERS` at a time. Counting is making the text once: for a group of
 * 100,000 members, 5.6 MB, which held the event loop tens of milliseconds in one piece.
 */
export function* jsonTextSlices(value: unknown): Slices<JsonText> {
  if (!holdsAtLeast(value, PIECES_FROM)) return JSON.stringify(value) ?? "null";
  let bytes = 0;
  let characters = 0;
  for (const piece of jsonPieces(value)) {
    bytes += Buffer.byteLength(piece);
    characters += piece.length;
    if (characters >= SLICE_CHARACTERS) {
      characters = 0;
      yield;
    }
  }
  return { bytes, pieces: () => jsonPieces(value) };
}

/**
 * Whether `value`'s JSON text is large enough to be made in pieces (`jsonText`): it holds
 * at least `PIECES_FROM` array elements and object keys.
 */
export function isLargeJson(value: unknown): boolean {
  return holdsAtLeast(value, PIECES_FROM);
}

/**
 * `value` as a `jsonb` parameter: its JSON text, or for a large value (`isLargeJson`) the
 * parameter in jsonb's binary format (a version byte, then the text), a Buffer, which pg sends
 * as binary, its text made a slice at a time (`jsonBytesSlices`). For a statement that takes a
 * batch's rows as one JSON parameter, cast `::jsonb` (the projections' writes), where a group of
 * 100,000 members is 5.6 MB of text: made in one piece, then encoded in one piece by pg, it
 * held the event loop some 25 ms.
 */
export async function jsonbParameter(value: unknown): Promise<string | Buffer> {
  if (!isLargeJson(value)) return JSON.stringify(value) ?? "null";
  const text = await runInSlices(jsonBytesSlices(value));
  return Buffer.concat([JSONB_BINARY_VERSION, ...text]);
}

/** The first byte of a jsonb in binary format: the format's version. */
const JSONB_BINARY_VERSION = Buffer.from([1]);

/**
 * The JSON text of `value`, made a slice at a time, as UTF-8 bytes in buffers of about
 * `SLICE_CHARACTERS` (the same text as `JSON.stringify`): for an append that sends a large
 * value as a parameter (`appendInTransaction` given no transaction's client, which cannot
 * stage it by COPY).
 */
export function* jsonBytesSlices(value: unknown): Slices<Buffer[]> {
  const buffers: Buffer[] = [];
  let pending: string[] = [];
  let characters = 0;
  for (const piece of jsonPieces(value)) {
    pending.push(piece);
    characters += piece.length;
    if (characters >= SLICE_CHARACTERS) {
      buffers.push(Buffer.from(pending.join(""), "utf8"));
      pending = [];
      characters = 0;
      yield;
    }
  }
  buffers.push(Buffer.from(pending.join(""), "utf8"));
  return buffers;
}

/**
 * Whether `value`'s plain arrays and objects hold at least `count` elements and keys. With a
 * stack of its own, not recursion: a cyclic value (which `jsonPieces` then refuses, as
 * `JSON.stringify` does) reaches the count instead of the call stack's limit.
 */
function holdsAtLeast(value: unknown, count: number): boolean {
  let left = count;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      left -= v.length;
      if (left <= 0) return true;
      for (const element of v) if (isContainer(element)) stack.push(element);
    } else if (isPlainObject(v)) {
      for (const key in v) {
        if (--left <= 0) return true;
        const element = v[key];
        if (isContainer(element)) stack.push(element);
      }
    }
  }
  return false;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return (
    (prototype === Object.prototype || prototype === null) &&
    typeof (value as { toJSON?: unknown }).toJSON !== "function"
  );
}

const isContainer = (value: unknown): boolean => Array.isArray(value) || isPlainObject(value);

/**
 * A container spelled piece by piece: one that holds many elements. A smaller one is one
 * piece, `JSON.stringify`'s own (a batch's 500 rows of people are spelled at its speed, the
 * group among them piece by piece).
 */
const isLargeContainer = (value: unknown): boolean =>
  isContainer(value) && holdsAtLeast(value, PIECES_FROM);

/** What `JSON.stringify` makes of a property's value that it leaves out of an object. */
const omitted = (value: unknown) =>
  value === undefined || typeof value === "function" || typeof value === "symbol";

/** The containers being spelled, outermost first: one met again inside itself is a cycle. */
type Ancestors = Set<object>;

/**
 * `value`'s JSON text (the same as `JSON.stringify`'s) in pieces of about `PIECE_LENGTH`
 * characters, made as they are asked for; a container that holds few values is one piece.
 */
export function* jsonPieces(value: unknown, ancestors: Ancestors = new Set()): Generator<string> {
  if (isContainer(value)) {
    // As JSON.stringify: a structure that holds itself has no JSON.
    if (ancestors.has(value as object)) {
      throw new TypeError("Converting circular structure to JSON");
    }
    ancestors.add(value as object);
    yield* containerPieces(value as object, ancestors);
    ancestors.delete(value as object);
  } else {
    yield JSON.stringify(value) ?? "null";
  }
}

function* containerPieces(value: object, ancestors: Ancestors): Generator<string> {
  if (Array.isArray(value)) {
    let piece = "[";
    for (let i = 0; i < value.length; i++) {
      const element: unknown = value[i];
      const separator = i === 0 ? "" : ",";
      if (isLargeContainer(element)) {
        yield piece + separator;
        piece = "";
        yield* jsonPieces(element, ancestors);
      } else {
        // In an array, what an object leaves out is null.
        piece += separator + (omitted(element) ? "null" : JSON.stringify(element));
      }
      if (piece.length >= PIECE_LENGTH) {
        yield piece;
        piece = "";
      }
    }
    yield `${piece}]`;
  } else {
    const object = value as Record<string, unknown>;
    let piece = "{";
    let first = true;
    for (const key in object) {
      if (!Object.hasOwn(object, key)) continue;
      const element = object[key];
      if (omitted(element)) continue;
      const name = `${first ? "" : ","}${JSON.stringify(key)}:`;
      first = false;
      if (isLargeContainer(element)) {
        yield piece + name;
        piece = "";
        yield* jsonPieces(element, ancestors);
      } else {
        piece += name + JSON.stringify(element);
      }
      if (piece.length >= PIECE_LENGTH) {
        yield piece;
        piece = "";
      }
    }
    yield `${piece}}`;
  }
}
