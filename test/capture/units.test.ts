import t from "tap";
import {
  formatGeneralizedTime,
  parseAccesslogEntry,
  parseGeneralizedTime,
  readAccesslogEntry,
  readOldValues,
} from "../../src/capture/accesslog.ts";
import { changeFromAccesslog } from "../../src/capture/changes.ts";
import { createNormalizer } from "../../src/capture/service.ts";
import { loopTurnsDuring } from "../support/loop-turns.ts";
import { applyChanges, sameAttributes } from "../../src/events/index.ts";
import { parseSubschema } from "../../src/directory/schema.ts";
import { matchesFilter } from "../../src/directory/match.ts";
import { parseLdapFilter } from "../../src/filters/index.ts";

t.test("accesslog reqMod lines become changes; binary values stay bytes", async (t) => {
  const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0x00, 0x3a, 0x20, 0x0a]);
  const record = parseAccesslogEntry({
    dn: "reqStart=20261122043500.000002Z,cn=accesslog",
    attributes: {
      reqStart: ["20261122043500.000002Z"],
      reqType: ["modify"],
      reqDN: ["uid=a,ou=people,dc=example,dc=org"],
      reqEntryUUID: ["6E2D-UUID"],
      reqAuthzID: ["dn:cn=admin,dc=example,dc=org"],
      reqResult: ["0"],
      reqMod: [
        Buffer.from("mail:+ a@example.org"),
        Buffer.from("mail:+ b@example.org"),
        Buffer.from("telephoneNumber:-"),
        Buffer.concat([Buffer.from("jpegPhoto:= "), jpeg]),
        Buffer.from("title:="),
      ],
      reqOld: [Buffer.from("telephoneNumber: 123")],
    },
  })!;
  t.equal(record.type, "modify");
  t.equal(record.actor, "cn=admin,dc=example,dc=org");
  t.same(
    record.changes.map((c) => [c.operation, c.attribute, c.values.length]),
    [
      ["add", "mail", 2],
      ["delete", "telephoneNumber", 0],
      ["replace", "jpegPhoto", 1],
      ["replace", "title", 0],
    ],
  );
  t.same(record.changes[2]!.values[0], jpeg, "the JPEG's bytes, untouched");
  t.same((await readOldValues(record)).telephoneNumber, [Buffer.from("123")]);
  t.equal(
    parseAccesslogEntry({
      dn: "x",
      attributes: { reqStart: ["1"], reqType: ["bind"], reqDN: ["x"] },
    }),
    undefined,
    "reads are not changes",
  );
  t.equal(
    parseAccesslogEntry({
      dn: "x",
      attributes: { reqStart: ["1"], reqType: ["add"], reqDN: ["x"], reqResult: ["68"] },
    }),
    undefined,
    "failed writes are not changes",
  );
});

t.test("generalized time round-trips", async (t) => {
  t.equal(parseGeneralizedTime("20261122043500Z")!.toISOString(), "2026-11-22T04:35:00.000Z");
  t.equal(
    parseGeneralizedTime("20261122043500.250000Z")!.toISOString(),
    "2026-11-22T04:35:00.250Z",
  );
  t.equal(parseGeneralizedTime("nonsense"), undefined);
  const date = new Date("2026-11-22T04:35:00.123Z");
  t.equal(formatGeneralizedTime(date), "20261122043500.123000Z");
});

t.test(
  "modify semantics: add merges, delete removes, replace sets, names ignore case",
  async (t) => {
    const start = { cn: ["A"], mail: ["a@x"], phone: ["1", "2"] };
    t.same(
      applyChanges(start, [
        { operation: "add", attribute: "MAIL", values: ["a@x", "b@x"] },
        { operation: "delete", attribute: "phone", values: ["1"] },
        { operation: "replace", attribute: "cn", values: ["B", "B"] },
        { operation: "replace", attribute: "title", values: [] },
        { operation: "add", attribute: "title", values: ["T"] },
      ]),
      { cn: ["B"], mail: ["a@x", "b@x"], phone: ["2"], title: ["T"] },
    );
    t.same(applyChanges(start, [{ operation: "delete", attribute: "phone", values: [] }]), {
      cn: ["A"],
      mail: ["a@x"],
    });
    t.same(start, { cn: ["A"], mail: ["a@x"], phone: ["1", "2"] }, "the input is not changed");
    t.ok(
      sameAttributes({ b: ["1"], a: ["2"] }, { a: ["2"], b: ["1"] }),
      "key order does not count",
    );
    t.notOk(sameAttributes({ a: ["1", "2"] }, { a: ["2", "1"] }), "value order does");
    const many = { member: Array.from({ length: 40 }, (_, i) => `m${i % 20}`) };
    t.same(
      applyChanges(many, [
        { operation: "delete", attribute: "member", values: ["m3", "m0", "m19", "m3", "x"] },
      ]).member,
      many.member.filter((value) => !["m0", "m3", "m19"].includes(value)),
      "a few values deleted: every time each is there, first and last too, one given twice",
    );
    t.equal(
      applyChanges(many, [{ operation: "delete", attribute: "member", values: ["x"] }]).member,
      many.member,
      "deleting a value not there keeps the array",
    );
  },
);

t.test(
  "subschema: canonical names, aliases, inherited syntax, binary and operational",
  async (t) => {
    const schema = parseSubschema(
      [
        "( 2.5.4.41 NAME 'name' EQUALITY caseIgnoreMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.15{32768} )",
        "( 2.5.4.3 NAME ( 'cn' 'commonName' ) DESC 'RFC4519: common name(s)' SUP name )",
        "( 0.9.2342.19200300.100.1.60 NAME 'jpegPhoto' SYNTAX 1.3.6.1.4.1.1466.115.121.1.28 )",
        "( 1.3.6.1.1.16.4 NAME 'entryUUID' SYNTAX 1.3.6.1.1.16.1 SINGLE-VALUE NO-USER-MODIFICATION USAGE directoryOperation )",
        "( 2.16.840.1.113730.3.1.3 NAME 'employeeNumber' SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )",
        "( 2.5.18.2 NAME 'modifyTimestamp' SYNTAX 1.3.6.1.4.1.1466.115.121.1.24 SINGLE-VALUE NO-USER-MODIFICATION USAGE directoryOperation )",
      ],
      [
        "( 2.5.6.6 NAME 'person' SUP top STRUCTURAL MUST ( sn $ cn ) MAY ( userPassword $ telephoneNumber ) )",
      ],
    );
    t.equal(schema.canonical("COMMONNAME"), "cn");
    t.equal(
      schema.attribute("cn")?.syntax,
      "1.3.6.1.4.1.1466.115.121.1.15",
      "syntax from SUP name",
    );
    t.ok(schema.isBinary("jpegPhoto"));
    t.ok(schema.isBinary("userCertificate;binary"));
    t.notOk(schema.isBinary("cn"));
    t.ok(schema.isOperational("entryUUID"));
    t.ok(schema.attribute("employeeNumber")?.singleValued);
    t.equal(schema.attribute("modifyTimestamp")?.format, "date-time");
    t.same(schema.attributesOf(["person"]).sort(), ["cn", "sn", "telephoneNumber", "userPassword"]);
  },
);

t.test("type filters are evaluated in memory like the directory would", async (t) => {
  const entry = { objectClass: ["top", "inetOrgPerson"], cn: ["Alice Liddell"], uid: ["alice"] };
  const match = (filter: string) => matchesFilter(parseLdapFilter(filter), entry);
  t.ok(match("(objectClass=INETORGPERSON)"));
  t.ok(match("(cn=*Lid*)"));
  t.notOk(match("(objectClass=person*)"), "a substring anchored at the start");
  t.ok(match("(|(uid=bob)(uid=ALICE))"));
  t.notOk(match("(!(uid=alice))"));
  t.notOk(match("(mail=*)"));
  t.ok(match("(uid>=a)"));
});

t.test("a large accesslog record is read a slice at a time, the same as at once", async (t) => {
  const members = Array.from({ length: 50_000 }, (_, i) => `uid=m${i},ou=people,dc=x`);
  const entry = {
    dn: "reqStart=20261122043500.000003Z,cn=accesslog",
    attributes: {
      reqStart: ["20261122043500.000003Z"],
      reqType: ["add"],
      reqDN: ["cn=all,ou=groups,dc=x"],
      reqResult: ["0"],
      reqMod: [
        Buffer.from("objectClass:+ groupOfNames"),
        ...members.map((dn) => Buffer.from(`member:+ ${dn}`)),
      ],
      reqOld: members.map((dn) => Buffer.from(`member: ${dn}`)),
    },
  };
  const { result, turns } = await loopTurnsDuring(() => readAccesslogEntry(entry));
  t.same(result, parseAccesslogEntry(entry));
  t.equal(result?.changes[1]?.values.length, 50_000);
  t.ok(turns >= 20, `the loop turned ${turns} times while it was read (one a 2,000 lines)`);
  const old = await loopTurnsDuring(() => readOldValues(result!));
  t.same(
    old.result.member?.map((value) => value.toString()),
    members,
    "its old values, read when asked for",
  );
  t.ok(old.turns >= 20, `the loop turned ${old.turns} times while they were read`);
});

t.test(
  "a one-member change to a group of 100,000 members turns the loop between its passes",
  async (t) => {
    const schema = parseSubschema(
      [
        "( 2.5.4.31 NAME 'member' SYNTAX 1.3.6.1.4.1.1466.115.121.1.12 )",
        "( 2.5.4.3 NAME 'cn' SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 )",
      ],
      [],
    );
    const normalizer = createNormalizer(schema, { types: [], capture: { redact: [] } });
    const members = Array.from({ length: 100_000 }, (_, i) => `uid=m${i},ou=people,dc=x`);
    const known = {
      dn: "cn=all,ou=groups,dc=x",
      type: null,
      attributes: { cn: ["all"], member: members },
      operational: { entryUUID: ["6e2d0000-0000-4000-8000-000000000001"] },
    };
    const record = parseAccesslogEntry({
      dn: "reqStart=20261122043500.000004Z,cn=accesslog",
      attributes: {
        reqStart: ["20261122043500.000004Z"],
        reqType: ["modify"],
        reqDN: ["cn=all,ou=groups,dc=x"],
        reqEntryUUID: ["6e2d0000-0000-4000-8000-000000000001"],
        reqResult: ["0"],
        reqMod: [Buffer.from(`member:- ${members[1]}`)],
        reqOld: members.map((dn) => Buffer.from(`member: ${dn}`)),
      },
    })!;
    const { result, turns } = await loopTurnsDuring(() =>
      changeFromAccesslog(normalizer, record, known),
    );
    t.same(result?.change.patch, [{ op: "remove", path: "/member/1" }]);
    t.equal(result?.change.after?.attributes.member?.length, 99_999);
    t.same(result?.change.attributes, ["member"]);
    t.ok(turns >= 2, `the loop turned ${turns} times: after the change, after its patch`);
  },
);
