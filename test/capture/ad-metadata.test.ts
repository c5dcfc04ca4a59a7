import t from "tap";
import { parseADPlace, formatADPlace } from "../../src/capture/ad.ts";
import {
  attributeOid,
  parseReplMetadata,
  parseReplMetadataXml,
  parseReplValueMetadataXml,
} from "../../src/capture/ad-metadata.ts";
import { writesOf } from "../../src/capture/from-ad.ts";
import { DirectorySchema, type AttributeType } from "../../src/directory/index.ts";
import { touchedAttributes, type EntryState } from "../../src/events/index.ts";

/** ada's replPropertyMetaData as Samba 4.17 served it after two writes: title+description, then title. */
const ADA_METADATA = Buffer.from(
  "AQAAAAAAAAAXAAAAAAAAAAAAAAABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAAMAAAABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAAwAAAACAAAAWLcmIQMAAABfaXqWmaEFTKefZyhDzO73ng8AAAAAAACeDwAAAAAAAA0AAAABAAAAV7cmIQMAAABfaXqWmaEFTKefZyhDzO73nQ8AAAAAAACdDwAAAAAAAAEAAgABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAAIAAgABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAABkBAgABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAAEACQABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAAgACQABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAABAACQABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAABkACQABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAADcACQABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAEAACQABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAFoACQABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAF4ACQABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAGAACQABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAGIACQABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAJIACQABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAJ8ACQABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAKAACQABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAN0ACQABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAC4BCQABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAA4DCQABAAAAGLcmIQMAAABfaXqWmaEFTKefZyhDzO73mA8AAAAAAACYDwAAAAAAAA==",
  "base64",
);

t.test("replPropertyMetaData: each attribute's version, time and local USN", async (t) => {
  const metadata = parseReplMetadata(ADA_METADATA)!;
  t.equal(metadata.length, 23);
  const title = metadata.find((m) => m.oid === "2.5.4.12");
  const description = metadata.find((m) => m.oid === "2.5.4.13");
  t.match(title, { version: 2, localUsn: 3998n });
  t.match(description, { version: 1, localUsn: 3997n });
  t.equal(title?.changedAt.toISOString(), "2026-12-07T03:22:00.000Z");
  t.equal(
    metadata.find((m) => m.oid === "1.2.840.113556.1.4.221")?.localUsn,
    3992n,
    "sAMAccountName",
  );
  t.equal(parseReplMetadata(Buffer.from("not metadata")), undefined);
});

t.test("msDS-ReplAttributeMetaData, a Windows DC's XML, one value an attribute", async (t) => {
  const value = (name: string, version: number, time: string, usn: number) =>
    `<DS_REPL_ATTR_META_DATA>\n\t<pszAttributeName>${name}</pszAttributeName>\n\t<dwVersion>${version}</dwVersion>\n\t<ftimeLastOriginatingChange>${time}</ftimeLastOriginatingChange>\n\t<uuidLastOriginatingDsaInvocationID>967a695f-a199-4c05-a79f-672843cceef7</uuidLastOriginatingDsaInvocationID>\n\t<usnOriginatingChange>${usn}</usnOriginatingChange>\n\t<usnLocalChange>${usn}</usnLocalChange>\n\t<pszLastOriginatingDsaDN>CN=NTDS Settings,CN=DC1,CN=Servers,CN=Default-First-Site-Name,CN=Sites,CN=Configuration,DC=example,DC=test</pszLastOriginatingDsaDN>\n</DS_REPL_ATTR_META_DATA>\n\u0000`;
  const metadata = parseReplMetadataXml([
    value("title", 2, "2026-12-07T03:22:00Z", 3998),
    value("description", 1, "2026-12-07T03:21:59Z", 3997),
    "<not metadata/>",
  ]);
  t.same(metadata, [
    {
      oid: undefined,
      name: "title",
      version: 2,
      changedAt: new Date("2026-12-07T03:22:00Z"),
      localUsn: 3998n,
    },
    {
      oid: undefined,
      name: "description",
      version: 1,
      changedAt: new Date("2026-12-07T03:21:59Z"),
      localUsn: 3997n,
    },
  ]);
});

/**
 * One value of `msDS-ReplValueMetaData` as a Windows DC writes it: a `DS_REPL_VALUE_META_DATA`
 * element (MS-DRSR 4.1.13.1.25's fields as XML text, FILETIME 0 as 1601-01-01), DNs escaped as
 * XML, each value ending in a NUL as the attribute form's do.
 */
function valueMetadataXml(stamp: {
  dn: string;
  deleted?: string;
  created: string;
  version: number;
  changed: string;
  usn: number;
  attribute?: string;
}): string {
  const dsa =
    "CN=NTDS Settings,CN=DC1,CN=Servers,CN=Default-First-Site-Name,CN=Sites,CN=Configuration,DC=example,DC=test";
  return [
    "<DS_REPL_VALUE_META_DATA>",
    `\t<pszAttributeName>${stamp.attribute ?? "member"}</pszAttributeName>`,
    `\t<pszObjectDn>${stamp.dn}</pszObjectDn>`,
    "\t<cbData>0</cbData>",
    "\t<pbData></pbData>",
    `\t<ftimeDeleted>${stamp.deleted ?? "1601-01-01T00:00:00Z"}</ftimeDeleted>`,
    `\t<ftimeCreated>${stamp.created}</ftimeCreated>`,
    `\t<dwVersion>${stamp.version}</dwVersion>`,
    `\t<ftimeLastOriginatingChange>${stamp.changed}</ftimeLastOriginatingChange>`,
    "\t<uuidLastOriginatingDsaInvocationID>967a695f-a199-4c05-a79f-672843cceef7</uuidLastOriginatingDsaInvocationID>",
    `\t<usnOriginatingChange>${stamp.usn}</usnOriginatingChange>`,
    `\t<usnLocalChange>${stamp.usn}</usnLocalChange>`,
    `\t<pszLastOriginatingDsaDN>${dsa}</pszLastOriginatingDsaDN>`,
    "</DS_REPL_VALUE_META_DATA>",
    "\u0000",
  ].join("\n");
}

t.test("msDS-ReplValueMetaData, a Windows DC's XML, one value a link value", async (t) => {
  const stamps = parseReplValueMetadataXml([
    valueMetadataXml({
      dn: "CN=Smith\\, Jones &amp; Co,OU=People,DC=example,DC=test",
      created: "2026-12-07T03:20:00Z",
      version: 1,
      changed: "2026-12-07T03:20:00Z",
      usn: 4001,
    }),
    valueMetadataXml({
      dn: "CN=bob &lt;&#x42;&gt;,OU=People,DC=example,DC=test",
      deleted: "2026-12-07T03:21:30Z",
      created: "2026-12-07T03:20:00Z",
      version: 2,
      changed: "2026-12-07T03:21:30Z",
      usn: 4005,
    }),
    // A value from before linked-value replication (forest level 2000): no stamp of its own.
    valueMetadataXml({
      dn: "CN=ada,OU=People,DC=example,DC=test",
      created: "1601-01-01T00:00:00Z",
      version: 0,
      changed: "1601-01-01T00:00:00Z",
      usn: 0,
    }),
    "<not metadata/>",
    valueMetadataXml({ dn: "CN=x", created: "", version: 1, changed: "then", usn: 1 }),
  ]);
  t.same(stamps, [
    {
      attribute: "member",
      dn: "CN=Smith\\, Jones & Co,OU=People,DC=example,DC=test",
      createdAt: new Date("2026-12-07T03:20:00Z"),
      deletedAt: undefined,
      version: 1,
      changedAt: new Date("2026-12-07T03:20:00Z"),
      localUsn: 4001n,
    },
    {
      attribute: "member",
      dn: "CN=bob <B>,OU=People,DC=example,DC=test",
      createdAt: new Date("2026-12-07T03:20:00Z"),
      deletedAt: new Date("2026-12-07T03:21:30Z"),
      version: 2,
      changedAt: new Date("2026-12-07T03:21:30Z"),
      localUsn: 4005n,
    },
    {
      attribute: "member",
      dn: "CN=ada,OU=People,DC=example,DC=test",
      createdAt: undefined,
      deletedAt: undefined,
      version: 0,
      changedAt: new Date("1601-01-01T00:00:00Z"),
      localUsn: 0n,
    },
  ]);
});

t.test("ATTRTYPs through the default prefix table; others unknown", async (t) => {
  t.equal(attributeOid(0x00000000), "2.5.4.0", "objectClass");
  t.equal(attributeOid(0x0009012e), "1.2.840.113556.1.4.302", "sAMAccountType");
  t.equal(attributeOid(0x00900001), undefined, "a prefix a DC added itself");
  t.equal(attributeOid(0x80000001 | 0), undefined, "an msDS-IntId");
});

t.test("a checkpoint's USN is a number: 999 comes before 1000", async (t) => {
  const place = parseADPlace(
    formatADPlace({
      invocationId: "967a695f-a199-4c05-a79f-672843cceef7",
      usn: 999n,
    }),
  )!;
  t.equal(place.usn, 999n);
  t.ok(place.usn < 1000n);
  t.equal(parseADPlace("999"), undefined, "no invocationId: not a place");
});

const type = (oid: string, name: string): AttributeType => ({
  oid,
  names: [name],
  syntax: undefined,
  singleValued: false,
  operational: false,
  binary: false,
  jsonType: "string",
});
const schema = new DirectorySchema([
  type("2.5.4.12", "title"),
  type("2.5.4.13", "description"),
  type("1.2.840.113556.1.4.1", "name"),
]);
const state = (dn: string, attributes: Record<string, string[]>): EntryState => ({
  dn,
  type: null,
  attributes,
  operational: {},
});
const at = (second: number) => new Date(Date.UTC(2026, 11, 7, 3, 0, second));

t.test("writes between passes: one change a write, in USN order as numbers", async (t) => {
  const metadata = [
    { oid: undefined, name: "TITLE", version: 3, changedAt: at(9), localUsn: 1000n },
    { oid: "2.5.4.13", version: 1, changedAt: at(5), localUsn: 999n },
    { oid: "1.2.840.113556.1.4.1", version: 2, changedAt: at(7), localUsn: 1000n },
    { oid: "2.5.4.0", version: 1, changedAt: at(1), localUsn: 10n },
  ];
  const steps = writesOf(
    { schema, typeOf: () => null },
    {
      uuid: "u",
      before: state("CN=a,DC=x", { description: ["old"], title: ["one"] }),
      after: state("CN=b,DC=x", { description: ["new"], title: ["three"], member: ["CN=m"] }),
      usn: 1001n,
      at: at(11),
      metadata,
      since: 900n,
    },
  );
  t.same(
    steps.map((s) => [s.usn, s.at.getUTCSeconds(), s.dn, Object.keys(s.after!.attributes)]),
    [
      [999n, 5, "CN=a,DC=x", ["description", "title"]],
      [1000n, 9, "CN=b,DC=x", ["description", "title"]],
      [1001n, 11, "CN=b,DC=x", ["description", "member", "title"]],
    ],
    "description's write, then title's with the rename (name), then what no metadata names",
  );
  t.same(steps[0]!.after!.attributes.title, ["one"], "the first write left title as it was");
  t.same(
    steps.map((s) => s.writes),
    [3, 3, 3],
    "three writes: two the attributes' metadata shows, one of linked values past them",
  );
});

const memberSchema = new DirectorySchema([
  type("2.5.4.12", "title"),
  type("2.5.4.13", "description"),
  type("2.5.4.31", "member"),
  type("1.2.840.113556.1.4.1", "name"),
]);
const PEOPLE = "OU=People,DC=x";
const person = (name: string) => `CN=${name},${PEOPLE}`;
const stamp = (
  name: string,
  usn: bigint,
  changed: number,
  options: { deleted?: boolean; dn?: string } = {},
) => ({
  attribute: "member",
  dn: options.dn ?? person(name),
  createdAt: at(0),
  deletedAt: options.deleted ? at(changed) : undefined,
  version: options.deleted ? 2 : 1,
  changedAt: at(changed),
  localUsn: usn,
});

t.test(
  "a group's member adds and removes between passes: one change a value's write, chained, with the attribute writes of its USN",
  async (t) => {
    const before = state("CN=team,DC=x", {
      description: ["old"],
      member: [person("ada"), person("bob"), person("carl"), person("gus")],
      title: ["one"],
    });
    const after = state("CN=team,DC=x", {
      description: ["new"],
      member: [person("ada"), person("dora"), person("eve")],
      title: ["two"],
    });
    const steps = writesOf(
      { schema: memberSchema, typeOf: () => null },
      {
        uuid: "u",
        before,
        after,
        usn: 990n,
        at: at(8),
        metadata: [
          { oid: "2.5.4.13", version: 2, changedAt: at(3), localUsn: 950n },
          { oid: undefined, name: "title", version: 2, changedAt: at(6), localUsn: 980n },
          // member's own stamp: its values' writes do not change it (linked-value replication).
          { oid: undefined, name: "member", version: 1, changedAt: at(0), localUsn: 10n },
        ],
        values: [
          stamp("ada", 100n, 1),
          // The DC writes the DN its own way; the state has it as read.
          stamp("dora", 960n, 4, { dn: "cn=Dora,ou=people,dc=x" }),
          stamp("bob", 970n, 5, { deleted: true }),
          stamp("eve", 980n, 6),
          stamp("carl", 980n, 6, { deleted: true }),
          // Added and removed again between the passes: a write that left no state.
          stamp("fay", 990n, 8, { deleted: true }),
          // gus's removal has no stamp since the checkpoint: the object's last write.
        ],
        since: 900n,
      },
    );
    t.same(
      steps.map((s) => [s.usn, s.at.getUTCSeconds(), touchedAttributes(s.before, s.after)]),
      [
        [950n, 3, ["description"]],
        [960n, 4, ["member"]],
        [970n, 5, ["member"]],
        [980n, 6, ["member", "title"]],
        [990n, 8, ["member"]],
      ],
      "description's write, dora's add, bob's removal, eve's add and carl's removal with title's write, then what no stamp explains",
    );
    t.same(
      steps.map((s) => s.after!.attributes.member),
      [
        [person("ada"), person("bob"), person("carl"), person("gus")],
        [person("ada"), person("dora"), person("bob"), person("carl"), person("gus")],
        [person("ada"), person("dora"), person("carl"), person("gus")],
        [person("ada"), person("dora"), person("eve"), person("gus")],
        [person("ada"), person("dora"), person("eve")],
      ],
      "each change holds the members as its write left them",
    );
    t.same(steps.at(-1)!.after, after, "the last leaves the group as read");
    t.same(
      steps.map((s) => s.writes),
      [5, 5, 5, 5, 5],
      "five writes since the checkpoint: description's, dora's, bob's, eve's and carl's, fay's",
    );
  },
);

t.test(
  "without value metadata (Samba), a group's member changes are one change at its last write",
  async (t) => {
    const steps = writesOf(
      { schema: memberSchema, typeOf: () => null },
      {
        uuid: "u",
        before: state("CN=team,DC=x", { member: [person("ada"), person("bob")] }),
        after: state("CN=team,DC=x", { member: [person("bob"), person("carl")] }),
        usn: 990n,
        at: at(8),
        metadata: [{ oid: undefined, name: "member", version: 1, changedAt: at(0), localUsn: 10n }],
        values: undefined,
        since: 900n,
      },
    );
    t.same(
      steps.map((s) => [s.usn, s.at.getUTCSeconds(), s.after!.attributes.member]),
      [[990n, 8, [person("bob"), person("carl")]]],
    );
  },
);
