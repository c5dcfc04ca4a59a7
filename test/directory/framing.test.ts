import t, { type Test } from "tap";
import { AddRequest, Attribute, Client, SearchRequest, EqualityFilter } from "ldapts";
import { toLdif, type LdifEntry } from "../../src/slapd/index.ts";
import { createDirectoryClient } from "../../src/directory/index.ts";
import {
  frameMessages,
  MessageFramer,
  messageLength,
  protocolOperation,
} from "../../src/directory/framing.ts";
import { startSlapd } from "../support/slapd.ts";

/** A BER SEQUENCE of `size` content octets, in short or long length form. */
function message(size: number, fill: number): Buffer {
  const content = Buffer.alloc(size, fill);
  if (size < 0x80) return Buffer.concat([Buffer.from([0x30, size]), content]);
  const octets: number[] = [];
  for (let rest = size; rest > 0; rest = Math.floor(rest / 256)) octets.unshift(rest % 256);
  return Buffer.concat([Buffer.from([0x30, 0x80 | octets.length, ...octets]), content]);
}

t.test("messageLength reads short and long forms, and waits for the length octets", async (t) => {
  t.equal(messageLength(message(5, 1), 0), 7);
  t.equal(messageLength(message(200, 1), 0), 203);
  t.equal(messageLength(message(70_000, 1), 0), 70_005);
  t.equal(messageLength(message(70_000, 1).subarray(0, 3), 0), undefined);
  t.equal(messageLength(Buffer.from([0x30]), 0), undefined);
});

t.test("protocolOperation reads the operation's tag past any message ID and length", async (t) => {
  const search = (messageId: number) =>
    new SearchRequest({
      messageId,
      baseDN: "cn=accesslog",
      filter: new EqualityFilter({ attribute: "reqDN", value: "uid=a" }),
    }).write();
  for (const messageId of [1, 127, 128, 300, 70_000, 2 ** 31 - 1]) {
    t.equal(protocolOperation(search(messageId)), 0x63, `search request, message ${messageId}`);
  }
  const big = new AddRequest({
    messageId: 9,
    dn: "uid=a",
    attributes: [new Attribute({ type: "description", values: ["x".repeat(70_000)] })],
  }).write();
  t.ok(big[1]! > 0x82, "an add in the long length form");
  t.equal(protocolOperation(big), 0x68);
  t.equal(protocolOperation(search(300).subarray(0, 4)), undefined, "cut short");
});

t.test("the framer gives back exactly the messages sent, however the bytes are cut", async (t) => {
  const sent = [message(3, 1), message(300, 2), message(70_000, 3), message(0, 4), message(9, 5)];
  const stream = Buffer.concat(sent);
  for (const size of [1, 2, 3, 5, 64, 1000, 65_536, stream.length]) {
    const framer = new MessageFramer();
    const received: Buffer[] = [];
    for (let at = 0; at < stream.length; at += size) {
      received.push(...framer.push(stream.subarray(at, at + size)));
    }
    t.same(
      received.map((m) => m.toString("hex")),
      sent.map((m) => m.toString("hex")),
      `chunks of ${size}`,
    );
  }
});

t.test("messages of megabytes come whole and exact, however the bytes are cut", async (t) => {
  const sent = [message(9, 1), message(2_500_000, 2), message(3, 3), message(1_100_000, 4)];
  const stream = Buffer.concat(sent);
  for (const size of [7, 65_536, 1_000_003, stream.length]) {
    const framer = new MessageFramer();
    const received: Buffer[] = [];
    for (let at = 0; at < stream.length; at += size) {
      received.push(...framer.push(stream.subarray(at, at + size)));
    }
    t.same(
      received.map((m) => m.length),
      sent.map((m) => m.length),
      `chunks of ${size}`,
    );
    t.ok(
      received.every((m, i) => m.equals(sent[i]!)),
      `chunks of ${size}: the same bytes`,
    );
  }
});

t.test("a message of a megabyte or more is held once: joined from no chunks", async (t) => {
  const big = message(2_000_000, 7);
  const { received, joined } = pushCountingJoins(t, big);
  t.ok(received.length === 1 && received[0]!.equals(big));
  t.equal(joined, 0, "copied into its own buffer as it came, never joined");
});

t.test("a length in more octets than it needs is read whole, however it is cut", async (t) => {
  // 0x88: eight length octets, the value 5 (BER allows a long form that is not the shortest).
  const long = Buffer.from([0x30, 0x88, 0, 0, 0, 0, 0, 0, 0, 5, 1, 2, 3, 4, 5]);
  const framer = new MessageFramer();
  const received: Buffer[] = [];
  for (let at = 0; at < long.length; at += 3) {
    received.push(...framer.push(long.subarray(at, at + 3)));
  }
  t.same(
    received.map((m) => m.toString("hex")),
    [long.toString("hex")],
  );
});

t.test("a message arriving in many chunks is joined once, not at every chunk", async (t) => {
  const big = message(1_000_000, 7);
  const { received, joined } = pushCountingJoins(t, big);
  t.equal(received.length, 1);
  t.ok(received[0]!.equals(big));
  t.ok(joined <= big.length + 64, `${joined} bytes joined for ${big.length}`);
});

t.test("a new connection starts afresh: a message cut off by a lost one is dropped", async (t) => {
  const given: string[] = [];
  const client = {
    socket: {},
    messageParser: { read: (data: Buffer) => given.push(data.toString("hex")) },
  };
  frameMessages(client as unknown as Client);
  const cut = message(300, 1);
  client.messageParser.read(cut.subarray(0, 100));
  client.socket = {}; // ldapts reconnected (autoRebind)
  const whole = message(4, 2);
  client.messageParser.read(whole);
  t.same(given, [whole.toString("hex")]);
});

t.test("the directory client's parser is given whole messages only", async (t) => {
  const members = Array.from(
    { length: 30_000 },
    (_, i) => `uid=user${i},ou=people,dc=example,dc=org`,
  );
  const group: LdifEntry = {
    dn: "cn=big,ou=groups,dc=example,dc=org",
    attributes: { objectClass: ["groupOfNames"], cn: ["big"], member: members },
  };
  const slapd = await startSlapd({ seedLdif: toLdif([group]) });
  t.teardown(() => slapd.stop());
  // ldapts's parser, beneath the framer: every connection's parser shares its prototype.
  const parser = Object.getPrototypeOf(
    (new Client({ url: slapd.url }) as unknown as { messageParser: object }).messageParser,
  ) as { read(data: Buffer, details: unknown): void };
  const read = parser.read;
  const given: Buffer[] = [];
  parser.read = function (this: unknown, data: Buffer, details: unknown) {
    given.push(data);
    return read.call(this, data, details);
  };
  t.teardown(() => {
    parser.read = read;
  });
  const directory = createDirectoryClient({
    url: slapd.url,
    bindDN: slapd.bindDN,
    password: slapd.password,
  });
  t.teardown(() => directory.close());
  const found = await directory.get(group.dn, { attributes: ["member"] });
  t.equal(found?.attributes.member?.length, members.length, "every member read");
  t.ok(
    given.some((data) => data.length > 1_000_000),
    "the group came as one message",
  );
  t.same(
    given.filter((data) => messageLength(data, 0) !== data.length).map((data) => data.length),
    [],
    "no piece of a message, nor two together",
  );
});

/**
 * Pushes `big` through a new framer in chunks of 64 KiB, counting the bytes `Buffer.concat`
 * joined meanwhile.
 */
function pushCountingJoins(t: Test, big: Buffer): { received: Buffer[]; joined: number } {
  const framer = new MessageFramer();
  const concat = Buffer.concat;
  let joined = 0;
  Buffer.concat = ((list: readonly Uint8Array[], length?: number) => {
    const out = concat(list, length);
    joined += out.length;
    return out;
  }) as typeof Buffer.concat;
  t.teardown(() => {
    Buffer.concat = concat;
  });
  const received: Buffer[] = [];
  for (let at = 0; at < big.length; at += 65_536) {
    received.push(...framer.push(big.subarray(at, at + 65_536)));
  }
  Buffer.concat = concat;
  return { received, joined };
}
