import t from "tap";
import { BerWriter, MessageParser, SearchEntry } from "ldapts";
import { binaryNameList, fromSearchEntry } from "../../src/directory/entry.ts";
import {
  EntrySink,
  LARGE_MESSAGE_BYTES,
  parseSearchResultEntry,
} from "../../src/directory/search-entries.ts";
import { loopTurnsDuring } from "../support/loop-turns.ts";

/** A SearchResultEntry message as a server sends it. */
function entryMessage(
  messageId: number,
  dn: string,
  attributes: readonly [string, readonly (string | Buffer)[]][],
): Buffer {
  const writer = new BerWriter();
  writer.startSequence();
  writer.writeInt(messageId);
  writer.startSequence(0x64);
  writer.writeString(dn);
  writer.startSequence();
  for (const [type, values] of attributes) {
    writer.startSequence();
    writer.writeString(type);
    writer.startSequence(0x31);
    for (const value of values) {
      writer.writeBuffer(Buffer.isBuffer(value) ? value : Buffer.from(value, "utf8"), 0x04);
    }
    writer.endSequence();
    writer.endSequence();
  }
  writer.endSequence();
  writer.endSequence();
  writer.endSequence();
  return writer.buffer;
}

/** What annal read before: ldapts's parse, its `toObject`, then `fromSearchEntry`. */
function throughLdapts(message: Buffer, binary: readonly string[]) {
  const parser = new MessageParser();
  let parsed: SearchEntry | undefined;
  parser.on("message", (m) => (parsed = m as SearchEntry));
  parser.read(message, new Map());
  const entry = parsed!.toObject([], binaryNameList(binary));
  return fromSearchEntry(entry, new Set(binary.map((name) => name.toLowerCase())));
}

const notUtf8 = Buffer.from([0xff, 0xfe, 0x00, 0x41]);
const photo = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]);
const cases: [string, number, string, [string, (string | Buffer)[]][], string[]][] = [
  [
    "text, several values",
    7,
    "uid=a,ou=people,dc=example,dc=org",
    [
      ["objectClass", ["top", "person", "inetOrgPerson"]],
      ["cn", ["Ana Meyer"]],
      ["description", [""]],
    ],
    [],
  ],
  [
    "a value that is not UTF-8 makes its attribute bytes",
    300,
    "uid=b,dc=example,dc=org",
    [
      ["cn", ["B"]],
      ["audio", ["ok", notUtf8]],
    ],
    [],
  ],
  [
    "text that holds U+FFFD itself stays text",
    301,
    "uid=c,dc=example,dc=org",
    [["description", ["ok", "a\ufffdb"]]],
    [],
  ],
  [
    "binary attributes by name, any case, and by the ;binary option",
    70_000,
    "uid=c,dc=x",
    [
      ["jpegPhoto", [photo, Buffer.from("looks like text")]],
      ["userCertificate;binary", [photo]],
      ["sn", ["Çelik", "😀 emoji"]],
    ],
    ["JPEGPHOTO"],
  ],
  [
    "a leading byte-order mark is dropped from text, kept in bytes",
    1,
    "cn=Ünïcödé,dc=x",
    [
      ["title", ["\ufeffLead"]],
      ["jpegPhoto", [Buffer.from("\ufeffbytes", "utf8")]],
    ],
    ["jpegPhoto"],
  ],
  [
    "long values and many members",
    2 ** 31 - 1,
    "cn=g,dc=x",
    [
      ["description", ["x".repeat(70_000)]],
      ["member", Array.from({ length: 5_000 }, (_, i) => `uid=user${i},ou=people,dc=x`)],
    ],
    [],
  ],
  [
    "attributes without values are left out",
    5,
    "uid=d,dc=x",
    [
      ["cn", []],
      ["sn", ["D"]],
    ],
    [],
  ],
];

for (const [what, messageId, dn, attributes, binary] of cases) {
  t.test(what, async (t) => {
    const message = entryMessage(messageId, dn, attributes);
    const ours = parseSearchResultEntry(message, new Set(binary.map((n) => n.toLowerCase())));
    t.same(ours, throughLdapts(message, binary), "what ldapts and fromSearchEntry made");
    t.equal(ours.dn, dn);
    for (const values of Object.values(ours.attributes)) {
      for (const value of values) {
        if (Buffer.isBuffer(value)) t.not(value.buffer, message.buffer, "bytes are copied out");
      }
    }
  });
}

t.test("a message cut short or with lengths that disagree is refused", async (t) => {
  const message = entryMessage(9, "uid=a,dc=x", [
    ["cn", ["A"]],
    ["sn", ["B"]],
  ]);
  for (const end of [3, 10, message.length - 1]) {
    t.throws(() => parseSearchResultEntry(message.subarray(0, end), new Set()), /malformed/);
  }
  const tampered = Buffer.from(message);
  tampered[tampered.indexOf(0x31) + 1]! += 1; // the first value set claims a byte more
  t.throws(() => parseSearchResultEntry(tampered, new Set()), /malformed/);
});

t.test("a sink keeps a page's entries, and gives ldapts one empty stand-in a page", async (t) => {
  const sink = new EntrySink(new Set());
  const first = entryMessage(300, "uid=a,dc=x", [["cn", ["A"]]]);
  const standIn = sink.take(first);
  t.ok(standIn && standIn !== first, "the page's first entry: a stand-in");
  const parser = new MessageParser();
  const seen: SearchEntry[] = [];
  parser.on("message", (m) => seen.push(m as SearchEntry));
  parser.read(standIn!, new Map());
  t.match(seen, [{ messageId: 300, name: "", attributes: [] }], "ldapts reads it");
  t.equal(sink.take(entryMessage(300, "uid=b,dc=x", [["cn", ["B"]]])), undefined, "then none");
  const done = Buffer.from([
    0x30, 0x0d, 0x02, 0x02, 0x01, 0x2c, 0x65, 0x07, 0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00,
  ]);
  t.equal(sink.take(done), done, "the search's end is ldapts's");
  parser.read(done, new Map());
  t.equal(seen.length, 2, "(a whole message)");
  t.same(
    (await sink.drain()).map((entry) => entry.dn),
    ["uid=a,dc=x", "uid=b,dc=x"],
  );
  t.ok(sink.take(first), "the next page's first entry: a stand-in again");

  t.ok(sink.take(first.subarray(0, first.length - 1)) === undefined, "a malformed one is taken");
  await t.rejects(sink.drain(), { code: "ANNAL_LDAP_OPERATION_FAILED" }, "and the page fails");
});

t.test(
  "a large entry (a group of 60,000 members) is decoded when drained, a slice at a time",
  async (t) => {
    const members = Array.from({ length: 60_000 }, (_, i) => `uid=m${i},ou=people,dc=x`);
    const message = entryMessage(7, "cn=all,dc=x", [
      ["cn", ["all"]],
      ["member", members],
    ]);
    t.ok(message.length >= LARGE_MESSAGE_BYTES, `${message.length} bytes`);
    const sink = new EntrySink(new Set());
    sink.take(message); // in the socket's data handler: kept, not decoded there
    const { result, turns } = await loopTurnsDuring(() => sink.drain());
    t.equal(result[0]?.attributes.member?.length, 60_000);
    t.same(result[0]?.attributes.member?.slice(-1), ["uid=m59999,ou=people,dc=x"]);
    t.ok(turns >= 30, `the loop turned ${turns} times while it was decoded (one a 2,000 values)`);
  },
);
