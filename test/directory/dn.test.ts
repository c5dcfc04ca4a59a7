import fc from "fast-check";
import t from "tap";
import {
  dnEquals,
  escapeDNValue,
  formatDN,
  isDescendantOf,
  normalizeDN,
  parentDN,
  parseDN,
  rdnOf,
} from "../../src/directory/index.ts";

/** Values full of the characters DNs treat specially, and any other Unicode. */
const tricky = fc.string({
  unit: fc.oneof(
    fc.constantFrom(
      ...[",", "+", '"', "\\", "<", ">", ";", "=", "#", " ", "\0", "\n", "é", "😀"],
      ...["\uFEFF", "\u00A0", "İ", "\u0316", "ß", "ﬁ"],
    ),
    fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
  ),
});

t.test("parseDN splits RDNs and multi-valued RDNs", async (t) => {
  t.same(parseDN("uid=alice,ou=people,dc=example,dc=org"), [
    [{ type: "uid", value: "alice" }],
    [{ type: "ou", value: "people" }],
    [{ type: "dc", value: "example" }],
    [{ type: "dc", value: "org" }],
  ]);
  t.same(parseDN("cn=Alice+mail=a@example.org,dc=org"), [
    [
      { type: "cn", value: "Alice" },
      { type: "mail", value: "a@example.org" },
    ],
    [{ type: "dc", value: "org" }],
  ]);
  t.same(parseDN(""), [], "the root DSE has no RDNs");
  t.same(parseDN("2.5.4.3=x"), [[{ type: "2.5.4.3", value: "x" }]], "numeric OIDs as types");
});

t.test("parseDN reads escapes, hex pairs and #hex values", async (t) => {
  const value = (dn: string): string => parseDN(dn)[0]?.[0]?.value ?? "(none)";
  t.equal(value("cn=Smith\\, John"), "Smith, John");
  t.equal(value("cn=a\\+b"), "a+b");
  t.equal(value('cn=\\"quoted\\"'), '"quoted"');
  t.equal(value("cn=back\\\\slash"), "back\\slash");
  t.equal(value("cn=\\3Cangle\\3e"), "<angle>");
  t.equal(value("cn=Lu\\C4\\8Di\\C4\\87"), "Lučić", "hex pairs are UTF-8 bytes");
  t.equal(value("cn=\\ lead and trail\\ "), " lead and trail ");
  t.equal(value("cn=\\#not hex"), "#not hex");
  t.equal(value("cn=a=b"), "a=b", "an = inside a value needs no escape");
  t.equal(value("cn=\uFEFFx"), "\uFEFFx", "a leading U+FEFF is part of the value");
  const hex = parseDN("cn=#04024869")[0]?.[0];
  t.equal(hex?.value, "Hi", "a #hex OCTET STRING is read as its content");
  t.same(hex?.ber, Buffer.from([0x04, 0x02, 0x48, 0x69]));
  t.equal(value("cn=#0102ff"), "#0102ff", "a #hex value that is not a string stays hex");
  t.equal(
    formatDN(parseDN("cn=#04024869,dc=org")),
    "cn=#04024869,dc=org",
    "#hex is written back as #hex",
  );
});

t.test("parseDN drops whitespace around separators but keeps it inside values", async (t) => {
  t.same(parseDN("  uid = alice smith ,  ou=people + cn = x  , dc=org "), [
    [{ type: "uid", value: "alice smith" }],
    [
      { type: "ou", value: "people" },
      { type: "cn", value: "x" },
    ],
    [{ type: "dc", value: "org" }],
  ]);
});

t.test("parseDN rejects what is not a DN with ANNAL_DN_INVALID", async (t) => {
  for (const bad of [
    "uid",
    "=alice",
    "uid=alice,",
    "uid=alice,,dc=org",
    "1uid=x",
    "u_id=x",
    "cn=a\\x",
    "cn=a;b",
    'cn=a"b',
    "cn=a<b",
    "cn=#abc",
    "cn=\\ff",
  ]) {
    t.throws(() => parseDN(bad), { code: "ANNAL_DN_INVALID", status: 400 }, bad);
  }
});

t.test("formatDN escapes what RFC 4514 requires", async (t) => {
  t.equal(escapeDNValue("Smith, John"), "Smith\\, John");
  t.equal(escapeDNValue('a+b"c\\d<e>f;g'), 'a\\+b\\"c\\\\d\\<e\\>f\\;g');
  t.equal(escapeDNValue(" #x "), "\\ #x\\ ", "leading space, trailing space");
  t.equal(escapeDNValue("#x"), "\\#x", "leading #");
  t.equal(escapeDNValue("a#b=c"), "a#b=c");
  t.equal(escapeDNValue("nul\0nl\n"), "nul\\00nl\\0a", "control characters as hex");
  t.equal(escapeDNValue("Zoë 😀"), "Zoë 😀", "other Unicode as is");
});

t.test("any value survives formatDN then parseDN", async () => {
  fc.assert(
    fc.property(tricky, tricky, (first, second) => {
      const dn = [
        [
          { type: "cn", value: first },
          { type: "uid", value: second },
        ],
        [{ type: "dc", value: "org" }],
      ];
      const back = parseDN(formatDN(dn));
      return back.length === 2 && back[0]?.[0]?.value === first && back[0]?.[1]?.value === second;
    }),
    { numRuns: 2000 },
  );
});

t.test("a value written plainly reads as the same value written in hex escapes", async () => {
  // Plain values are read as their own text, escaped ones byte by byte: both must agree.
  const plain = fc
    .string({
      unit: fc.oneof(
        fc.constantFrom(..."aZ09 =#-.é😀\n\uFEFF\u00A0İß"),
        fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
      ),
    })
    .filter((v) => !/[,+"\\<>;\0]|[\uD800-\uDFFF]/u.test(v) && !v.trimStart().startsWith("#"));
  const hex = (v: string) =>
    [...Buffer.from(v, "utf8")].map((b) => `\\${b.toString(16).padStart(2, "0")}`).join("");
  fc.assert(
    fc.property(plain, (v) => {
      const core = v.replace(/^ +| +$/g, "");
      const read = parseDN(`cn=${v},dc=org`)[0]?.[0]?.value;
      const escaped = parseDN(`cn=${hex(core)},dc=org`)[0]?.[0]?.value;
      return read === core && escaped === core;
    }),
    { numRuns: 2000 },
  );
});

t.test(
  "normalizeDN: types lowercased, case-ignore values folded, spaces and order settled",
  async (t) => {
    t.equal(
      normalizeDN("UID=Alice , OU=People,DC=Example,DC=org"),
      "uid=alice,ou=people,dc=example,dc=org",
    );
    t.equal(normalizeDN("CN=Bob  Builder+UID=B1,dc=org"), "cn=bob builder+uid=b1,dc=org");
    t.equal(normalizeDN("uid=b1+cn=Bob Builder,dc=org"), "cn=bob builder+uid=b1,dc=org");
    t.equal(normalizeDN("2.5.4.3=Al,commonName=x"), "cn=al,cn=x", "OIDs and long names to short");
    t.equal(normalizeDN("cn=#04024869"), "cn=hi", "a #hex string compares by content");
    t.equal(
      normalizeDN("x-custom=MixedCase"),
      "x-custom=MixedCase",
      "unknown types compare exactly",
    );
    const dotted = normalizeDN("cn=İ\u0316");
    t.equal(normalizeDN(dotted), dotted, "lowercasing İ keeps the form canonical");
    t.ok(dnEquals("cn=Smith\\, John,dc=ORG", "CN=smith\\2c john, dc=org"));
    t.notOk(dnEquals("cn=a,dc=org", "cn=b,dc=org"));
  },
);

t.test("normalizing is idempotent and agrees with dnEquals", async () => {
  fc.assert(
    fc.property(tricky, (value) => {
      const dn = formatDN([[{ type: "CN", value }], [{ type: "DC", value: "Org" }]]);
      const once = normalizeDN(dn);
      return normalizeDN(once) === once && dnEquals(dn, once);
    }),
    { numRuns: 1000 },
  );
});

t.test("a value is normalised by RFC 4518's rules, plain ASCII or not", async () => {
  // The rules spelled out in full; normalizeDN takes a shorter way for printable ASCII.
  const rules = (value: string, caseIgnore: boolean) => {
    const spaced = value.normalize("NFKC").trim().replace(/\s+/g, " ");
    return caseIgnore ? spaced.toLowerCase().normalize("NFKC") : spaced;
  };
  const ascii = fc.string({
    unit: fc.constantFrom(" ", "#", ",", "+", "\\", "a", "B", "z", "0", "~"),
  });
  fc.assert(
    fc.property(fc.oneof(ascii, tricky), (value) => {
      const [rdn] = parseDN(formatDN([[{ type: "cn", value }]])).map((r) => r[0]!.value);
      const expected = rules(rdn ?? "", true);
      const ignoringCase = normalizeDN(formatDN([[{ type: "cn", value }]]));
      const keepingCase = normalizeDN(formatDN([[{ type: "x-custom", value }]]));
      return (
        ignoringCase === formatDN([[{ type: "cn", value: expected }]]) &&
        keepingCase === formatDN([[{ type: "x-custom", value: rules(rdn ?? "", false) }]])
      );
    }),
    { numRuns: 3000 },
  );
});

t.test("isDescendantOf, parentDN and rdnOf", async (t) => {
  const alice = "uid=alice,ou=people,dc=example,dc=org";
  t.ok(isDescendantOf(alice, "dc=example,dc=org"));
  t.ok(isDescendantOf(alice, "OU=People, DC=Example, DC=Org"), "compares normalised");
  t.notOk(isDescendantOf(alice, alice), "an entry is not its own descendant");
  t.notOk(isDescendantOf("dc=example,dc=org", alice));
  t.notOk(isDescendantOf("uid=x,ou=people2,dc=example,dc=org", "ou=people,dc=example,dc=org"));
  t.ok(isDescendantOf("dc=org", ""), "everything is below the root DSE");
  t.equal(parentDN(alice), "ou=people,dc=example,dc=org");
  t.equal(parentDN("cn=Smith\\, J,dc=org"), "dc=org");
  t.equal(parentDN("dc=org"), undefined);
  t.equal(rdnOf("cn=Smith\\, J+uid=sj,dc=org"), "cn=Smith\\, J+uid=sj");
  t.throws(() => rdnOf(""), { code: "ANNAL_DN_INVALID" });
});
