import { isUtf8 } from "node:buffer";
import type { Client } from "ldapts";
import { baseName, type DirectoryEntry } from "./entry.ts";
import { DirectoryError } from "./errors.ts";
import { runInSlices, runToEnd, SLICE_VALUES, type Slices } from "../slices.ts";
import {
  messageIdElement,
  protocolOperation,
  SEARCH_RESULT_ENTRY,
  type MessageTap,
} from "./framing.ts";

/**
 * The entries of the search running on a connection, read straight from their messages into
 * `DirectoryEntry`s. ldapts would parse each value twice (bytes and text), keep a view of the
 * message per value, build an object per entry and hand it on to be converted once more: an
 * import of 100,000 entries spent a sixth of its CPU there, and a group of 400,000 members
 * held as many views at once.
 */
export class EntrySink {
  /** Entries in order; a large one as its message, decoded in slices when drained. */
  private entries: (DirectoryEntry | Buffer)[] = [];
  private failure: DirectoryError | undefined;
  /** Whether ldapts was given a stand-in entry since the last `drain`. */
  private stoodIn = false;
  readonly binary: ReadonlySet<string>;

  constructor(binary: ReadonlySet<string>) {
    this.binary = binary;
  }

  /**
   * Takes a search result entry, and gives ldapts an empty stand-in for a page's first one:
   * ldapts asks for the next page only after a page that had entries. Other messages are
   * ldapts's to parse.
   */
  take(message: Buffer): Buffer | undefined {
    if (protocolOperation(message) !== SEARCH_RESULT_ENTRY) return message;
    if (message.length >= LARGE_MESSAGE_BYTES) {
      // Decoded when drained, a slice at a time: this runs in the socket's data handler.
      this.entries.push(message);
    } else {
      try {
        this.entries.push(parseSearchResultEntry(message, this.binary));
      } catch (error) {
        this.failure ??= unreadable(error);
      }
    }
    if (this.stoodIn) return undefined;
    this.stoodIn = true;
    return standIn(message);
  }

  /**
   * The entries received since the last call; throws if one of them could not be read. A
   * large entry is decoded here, with a turn of the event loop every `SLICE_VALUES` values.
   */
  async drain(): Promise<DirectoryEntry[]> {
    if (this.failure) throw this.failure;
    const received = this.entries;
    this.entries = [];
    this.stoodIn = false;
    const entries: DirectoryEntry[] = new Array(received.length);
    for (let i = 0; i < received.length; i++) {
      const item = received[i]!;
      if (!Buffer.isBuffer(item)) {
        entries[i] = item;
        continue;
      }
      received[i] = EMPTY; // the message is not kept once decoded
      try {
        entries[i] = await runInSlices(searchResultEntrySlices(item, this.binary));
      } catch (error) {
        throw unreadable(error);
      }
    }
    return entries;
  }
}

/**
 * A search result entry of this size or more is decoded in slices (`EntrySink.drain`): about
 * 20,000 values of a group's members. Smaller ones take well under a millisecond each.
 */
export const LARGE_MESSAGE_BYTES = 1 << 20;

const EMPTY = Buffer.alloc(0);

function unreadable(error: unknown): DirectoryError {
  return new DirectoryError(
    "ANNAL_LDAP_OPERATION_FAILED",
    `the directory sent a search result annal cannot read: ${(error as Error).message}`,
    { operation: "search", status: 502, cause: error },
  );
}

/** A search result entry of the same message ID with an empty DN and no attributes. */
function standIn(message: Buffer): Buffer {
  const { start, end } = messageIdElement(message)!;
  const id = message.subarray(start, end);
  const operation = Buffer.from([SEARCH_RESULT_ENTRY, 4, 0x04, 0, 0x30, 0]);
  return Buffer.concat([Buffer.from([0x30, id.length + operation.length]), id, operation]);
}

const sinks = new WeakMap<Client, EntrySink>();

/** The tap a pooled connection is framed with: entries go to its sink while one is set. */
export function entryTap(client: Client): MessageTap {
  return (message) => {
    const sink = sinks.get(client);
    return sink === undefined ? message : sink.take(message);
  };
}

/** Collects the entries that arrive on `client` until `stop` is called. */
export function collectEntries(client: Client, binary: ReadonlySet<string>): EntrySink {
  const sink = new EntrySink(binary);
  sinks.set(client, sink);
  return sink;
}

export function stopCollecting(client: Client): void {
  sinks.delete(client);
}

/**
 * Reads a SearchResultEntry message (RFC 4511 §4.5.2):
 *
 *     LDAPMessage ::= SEQUENCE { messageID INTEGER, protocolOp [APPLICATION 4] SEQUENCE {
 *       objectName OCTET STRING, attributes SEQUENCE OF SEQUENCE {
 *         type OCTET STRING, vals SET OF OCTET STRING } }, controls [0] OPTIONAL }
 *
 * An attribute comes as Buffers when its base name is in `binary`, when it has the `;binary`
 * option, or when one of its values is not UTF-8; otherwise as strings (a leading byte-order
 * mark dropped, as ldapts's decoder does). Binary values are copied out of the message, so
 * that none holds the whole message in memory. Attributes without values are left out.
 */
export function parseSearchResultEntry(
  message: Buffer,
  binary: ReadonlySet<string>,
): DirectoryEntry {
  return runToEnd(searchResultEntrySlices(message, binary));
}

/**
 * `parseSearchResultEntry` of a message that may be large: one of `LARGE_MESSAGE_BYTES` or
 * more is decoded a slice at a time, with a turn of the event loop every `SLICE_VALUES` values.
 */
export async function readSearchResultEntry(
  message: Buffer,
  binary: ReadonlySet<string>,
): Promise<DirectoryEntry> {
  if (message.length < LARGE_MESSAGE_BYTES) return parseSearchResultEntry(message, binary);
  try {
    return await runInSlices(searchResultEntrySlices(message, binary));
  } catch (error) {
    throw unreadable(error);
  }
}

/** `parseSearchResultEntry` as slices: it yields every `SLICE_VALUES` values decoded. */
function* searchResultEntrySlices(
  message: Buffer,
  binary: ReadonlySet<string>,
): Slices<DirectoryEntry> {
  const reader = new BerCursor(message);
  const end = reader.enter(0x30);
  reader.skip(0x02); // messageID
  const operationEnd = reader.enter(SEARCH_RESULT_ENTRY);
  const dn = reader.octets(0x04).toString("utf8");
  const attributesEnd = reader.enter(0x30);
  const attributes: Record<string, string[] | Buffer[]> = {};
  while (reader.at < attributesEnd) {
    const attributeEnd = reader.enter(0x30);
    const name = reader.octets(0x04).toString("utf8");
    const valuesEnd = reader.enter(0x31);
    // Where each value lies in the message, two numbers a value: a view (`subarray`) per value
    // costs a hundred bytes or so of its own, 40 MB for a group of 400,000 members.
    const bounds: number[] = [];
    while (reader.at < valuesEnd) {
      const start = reader.content(0x04);
      bounds.push(start, reader.at);
      if (bounds.length % (2 * SLICE_VALUES) === 0) yield;
    }
    reader.expectAt(valuesEnd);
    reader.expectAt(attributeEnd);
    if (bounds.length === 0) continue;
    const text = !binary.has(baseName(name)) && !BINARY_OPTION.test(name);
    const values = text ? yield* decodeTexts(message, bounds) : undefined;
    attributes[name] = values ?? (yield* copyValues(message, bounds));
  }
  reader.expectAt(attributesEnd);
  reader.expectAt(operationEnd);
  if (operationEnd > end) throw new Error("malformed search result entry: longer than its message");
  return { dn, attributes };
}

const BINARY_OPTION = /;binary$/i;

/**
 * The values at `bounds` as text, or undefined when one of them is not UTF-8. Each is decoded
 * straight from the message; only one that decodes to a replacement character (U+FFFD, which
 * bad bytes become, and which valid text may hold too) is checked byte by byte.
 */
function* decodeTexts(message: Buffer, bounds: readonly number[]): Slices<string[] | undefined> {
  const values: string[] = new Array(bounds.length / 2);
  for (let i = 0; i < bounds.length; i += 2) {
    const start = bounds[i]!;
    const end = bounds[i + 1]!;
    const text = message.toString("utf8", start, end);
    if (text.includes("\uFFFD") && !isUtf8(message.subarray(start, end))) return undefined;
    values[i / 2] = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
    if (i % (2 * SLICE_VALUES) === 2 * SLICE_VALUES - 2) yield;
  }
  return values;
}

/**
 * The values at `bounds` copied out of the message, so that none holds it in memory: the
 * attribute's values are copied together, in one piece, and each is a view of that copy (a
 * copy of each value made two Buffers a value, 200,000 for a record of a change to a group of
 * 100,000 members, whose collection held the event loop as long as their making).
 */
function* copyValues(message: Buffer, bounds: readonly number[]): Slices<Buffer[]> {
  const first = bounds[0]!;
  const values: Buffer[] = new Array(bounds.length / 2);
  const copy = Buffer.from(message.subarray(first, bounds[bounds.length - 1]!));
  for (let i = 0; i < bounds.length; i += 2) {
    values[i / 2] = copy.subarray(bounds[i]! - first, bounds[i + 1]! - first);
    if (i % (2 * SLICE_VALUES) === 2 * SLICE_VALUES - 2) yield;
  }
  return values;
}

/** A read position in a BER message; every read checks its tag and its bounds. */
class BerCursor {
  private readonly data: Buffer;
  at = 0;

  constructor(data: Buffer) {
    this.data = data;
  }

  /** Reads a constructed element's tag and length; returns where its content ends. */
  enter(tag: number): number {
    const length = this.header(tag);
    return this.at + length;
  }

  /** An OCTET STRING's content, as a view of the message. */
  octets(tag: number): Buffer {
    const length = this.header(tag);
    const value = this.data.subarray(this.at, this.at + length);
    this.at += length;
    return value;
  }

  /** Steps over an OCTET STRING; returns where its content starts (it ends at `at`). */
  content(tag: number): number {
    const length = this.header(tag);
    const start = this.at;
    this.at += length;
    return start;
  }

  skip(tag: number): void {
    const length = this.header(tag);
    this.at += length;
  }

  expectAt(position: number): void {
    if (this.at !== position) throw new Error("malformed search result entry: lengths disagree");
  }

  private header(tag: number): number {
    const data = this.data;
    if (data[this.at] !== tag) {
      throw new Error(
        `malformed search result entry: expected tag 0x${tag.toString(16)} at ${this.at}`,
      );
    }
    let length = data[this.at + 1];
    this.at += 2;
    if (length === undefined) throw new Error("malformed search result entry: cut short");
    if (length >= 0x80) {
      const octets = length & 0x7f;
      if (octets === 0 || octets > 4) {
        throw new Error("malformed search result entry: unsupported length");
      }
      if (this.at + octets > data.length) {
        throw new Error("malformed search result entry: cut short");
      }
      length = 0;
      for (let i = 0; i < octets; i++) length = length * 256 + data[this.at + i]!;
      this.at += octets;
    }
    if (this.at + length > data.length) {
      throw new Error("malformed search result entry: cut short");
    }
    return length;
  }
}
