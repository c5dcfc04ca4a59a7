import t from "tap";
import { parseADPlace, formatADPlace } from "../../src/capture/ad.ts";
import {
  attributeOid,
  parseReplMetadata,
  parseReplMetadataXml,
} from "../../src/capture/ad-metadata.ts";
import { writesOf } from "../../src/capture/from-ad.ts";
import { DirectorySchema, type AttributeType } from "../../src/directory/index.ts";
import type { EntryState } from "../../src/events/index.ts";

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
