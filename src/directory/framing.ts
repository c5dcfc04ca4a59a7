import type { Client } from "ldapts";

/**
 * Splits the bytes of an LDAP connection into whole messages (BER: tag, length, content)
 * before ldapts parses them. ldapts's own parser joins every chunk received to what it holds
 * until a message is complete: a group of 400,000 members arrives as one message of some
 * 20 MB in hundreds of chunks, each chunk copying all that came before. Here the chunks wait
 * in a list and are joined once, and a message of a megabyte or more is copied chunk by chunk
 * into a buffer of its length, so that it is never held twice (as its chunks and joined).
 */
export class MessageFramer {
  private chunks: Buffer[] = [];
  private held = 0;
  /** Length of the message at the head of `chunks`, header included, once its header is in. */
  private next: number | undefined;

  /**
   * A large message being received (`LARGE_MESSAGE`): its buffer, of its whole length, and
   * how much of it has come. Chunks are copied into it as they come, so the message is held
   * once, not as its chunks and then joined.
   */
  private large: { readonly buffer: Buffer; at: number } | undefined;

  /** Takes a chunk; returns the messages it completes, each exactly one message. */
  push(chunk: Buffer): Buffer[] {
    const messages: Buffer[] = [];
    let rest = chunk;
    if (this.large) {
      const { buffer } = this.large;
      const taken = rest.copy(buffer, this.large.at);
      this.large.at += taken;
      if (this.large.at < buffer.length) return messages;
      messages.push(buffer);
      this.large = undefined;
      rest = rest.subarray(taken);
      if (rest.length === 0) return messages;
    }
    this.chunks.push(rest);
    this.held += rest.length;
    this.next ??= this.headLength();
    if (this.next === undefined || this.held < this.next) return this.startLarge(messages);
    const data = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.held);
    let at = 0;
    for (;;) {
      const length = messageLength(data, at);
      if (length === undefined || at + length > data.length) break;
      messages.push(data.subarray(at, at + length));
      at += length;
    }
    const left = data.subarray(at);
    this.chunks = left.length > 0 ? [left] : [];
    this.held = left.length;
    this.next = this.headLength();
    return this.startLarge(messages);
  }

  /** Moves what is held of a large message whose length is known into a buffer of its own. */
  private startLarge(messages: Buffer[]): Buffer[] {
    if (this.next === undefined || this.next < LARGE_MESSAGE || this.held >= this.next) {
      return messages;
    }
    const buffer = Buffer.allocUnsafe(this.next);
    let at = 0;
    for (const chunk of this.chunks) at += chunk.copy(buffer, at);
    this.large = { buffer, at };
    this.chunks = [];
    this.held = 0;
    this.next = undefined;
    return messages;
  }

  private headLength(): number | undefined {
    if (this.held === 0) return undefined;
    const head = this.chunks[0]!;
    if (head.length >= LONGEST_HEADER || this.chunks.length === 1) return messageLength(head, 0);
    return messageLength(Buffer.concat(this.chunks, Math.min(this.held, LONGEST_HEADER)), 0);
  }
}

/** A tag octet, and a length in the long form: its first octet and up to 127 more. */
const LONGEST_HEADER = 129;

/** From this length a message is received into a buffer of its own (`MessageFramer.large`). */
const LARGE_MESSAGE = 1024 * 1024;

/**
 * The whole length of the BER element at `at` (tag, length octets, content), or undefined
 * while its length octets are not all in. LDAP's messages use one tag octet (a SEQUENCE).
 */
export function messageLength(data: Buffer, at: number): number | undefined {
  if (data.length < at + 2) return undefined;
  const first = data[at + 1]!;
  if (first < 0x80) return 2 + first;
  const octets = first & 0x7f;
  if (data.length < at + 2 + octets) return undefined;
  let length = 0;
  for (let i = 0; i < octets; i++) length = length * 256 + data[at + 2 + i]!;
  return 2 + octets + length;
}

/** RFC 4511's protocol operation tags of a search result entry and an intermediate response. */
export const SEARCH_RESULT_ENTRY = 0x64;
export const INTERMEDIATE_RESPONSE = 0x79;

/**
 * Where a whole LDAP message's messageID element lies (RFC 4511 §4.2: `LDAPMessage ::=
 * SEQUENCE { messageID INTEGER, protocolOp CHOICE {…}, … }`): an INTEGER of one tag octet and
 * a short length (at most 4 octets), right after the SEQUENCE's header. Its end is where the
 * protocol operation starts.
 */
export function messageIdElement(message: Buffer): { start: number; end: number } | undefined {
  const start = message.length > 1 && message[1]! >= 0x80 ? 2 + (message[1]! & 0x7f) : 2;
  const idLength = message[start + 1];
  return idLength === undefined ? undefined : { start, end: start + 2 + idLength };
}

/**
 * The protocol operation's tag of a whole LDAP message: 0x64 a search result entry, 0x65 a
 * search's end, 0x79 an intermediate response, ...; undefined if the message is cut short.
 */
export function protocolOperation(message: Buffer): number | undefined {
  const id = messageIdElement(message);
  return id === undefined ? undefined : message[id.end];
}

/**
 * A look at each whole message before ldapts parses it: returns what ldapts is given instead
 * (the message itself, a stand-in for it), or undefined to keep it from ldapts.
 */
export type MessageTap = (message: Buffer) => Buffer | undefined;

interface ClientInternals {
  readonly messageParser?: { read(data: Buffer, details: unknown): void };
  readonly socket?: object;
}

/**
 * Puts a framer in front of the client's parser, so that the parser is only given whole
 * messages; a new connection of the client starts a new framer (a message cut off by a
 * lost connection never prefixes the next one's). A `tap` sees every message first and may
 * keep it from ldapts, or give ldapts a stand-in: the entries annal reads itself
 * (`search-entries.ts`), a persistent search's entries and intermediate responses, which
 * ldapts would otherwise hold until the search ends, or not parse at all. Throws if this
 * ldapts no longer has the parser where this expects it.
 */
export function frameMessages(client: Client, tap?: MessageTap): Client {
  const internals = client as unknown as ClientInternals;
  const parser = internals.messageParser;
  if (typeof parser?.read !== "function") {
    throw new Error("ldapts's Client has no messageParser.read: see src/directory/framing.ts");
  }
  const read = parser.read.bind(parser);
  let framer = new MessageFramer();
  let socket: object | undefined;
  parser.read = (data, details) => {
    if (internals.socket !== socket) {
      socket = internals.socket;
      framer = new MessageFramer();
    }
    for (const message of framer.push(data)) {
      const given = tap === undefined ? message : tap(message);
      if (given !== undefined) read(given, details);
    }
  };
  return client;
}
