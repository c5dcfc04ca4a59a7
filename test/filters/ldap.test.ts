import t from "tap";
import {
  FilterSyntaxError,
  FilterUnsupportedError,
  parseLdapFilter,
} from "../../src/filters/index.ts";
import type { FilterNode } from "../../src/filters/index.ts";
import { and, eq, not, or, present, substring, thrown } from "./fixtures/ast.ts";

t.test("LDAP filters parse to the filter tree (RFC 4515 examples and more)", async (t) => {
  const cases: [string, FilterNode][] = [
    ["(cn=Babs Jensen)", eq("cn", "Babs Jensen")],
    ["(!(cn=Tim Howes))", not(eq("cn", "Tim Howes"))],
    [
      "(&(objectClass=Person)(|(sn=Jensen)(cn=Babs J*)))",
      and(
        eq("objectClass", "Person"),
        or(eq("sn", "Jensen"), substring("cn", { initial: "Babs J" })),
      ),
    ],
    ["(o=univ*of*mich*)", substring("o", { initial: "univ", any: ["of", "mich"] })],
    ["(o=*univ*of*mich)", substring("o", { any: ["univ", "of"], final: "mich" })],
    ["(seeAlso=)", eq("seeAlso", "")],
    [
      "(o=Parens R Us \\28for all your parenthetical needs\\29)",
      eq("o", "Parens R Us (for all your parenthetical needs)"),
    ],
    ["(cn=*\\2A*)", substring("cn", { any: ["*"] })],
    ["(filename=C:\\5cMyFile)", eq("filename", "C:\\MyFile")],
    ["(bin=\\00\\00\\00\\04)", eq("bin", "\0\0\0\u0004")],
    ["(sn=Lu\\c4\\8di\\c4\\87)", eq("sn", "Lučić")],
    ["(1.3.6.1.4.1.1466.0=\\04\\02\\48\\69)", eq("1.3.6.1.4.1.1466.0", "\u0004\u0002Hi")],
    ["(cn;lang-de;x-y=Straße)", eq("cn;lang-de;x-y", "Straße")],
    ["(2.5.4.3=x)", eq("2.5.4.3", "x")],
    ["(cn~=ann)", { op: "approx", attribute: "cn", value: "ann" }],
    ["(uidNumber>=1000)", { op: "ge", attribute: "uidNumber", value: "1000" }],
    ["(uidNumber<=1000)", { op: "le", attribute: "uidNumber", value: "1000" }],
    ["(cn=*)", present("cn")],
    ["(cn=**)", present("cn")],
    ["(cn=a**b)", substring("cn", { initial: "a", final: "b" })],
    ["(cn= a )", eq("cn", " a ")],
    ["(cn=Ünïcødé 😀)", eq("cn", "Ünïcødé 😀")],
    ["(&)", and()],
    ["(|)", or()],
    [" \n(& (cn=a)\n (sn=b) ) \t", and(eq("cn", "a"), eq("sn", "b"))],
    ["(!  (cn=a) )", not(eq("cn", "a"))],
  ];
  for (const [text, ast] of cases) t.same(parseLdapFilter(text), ast, text);
});

t.test("malformed LDAP filters report the position and what was expected", async (t) => {
  const cases: [string, number, string][] = [
    ["(&(cn=a)(sn=b)", 14, '"(" or ")"'],
    ["(cn=a", 5, '")"'],
    ["cn=a", 0, '"("'],
    ["(cn=a))", 6, "the end of the filter"],
    ["(cn=a)(sn=b)", 6, "the end of the filter"],
    ["()", 1, 'an attribute name or "&", "|", "!"'],
    ["(=a)", 1, 'an attribute name or "&", "|", "!"'],
    ["(cn>a)", 4, '"="'],
    ["(cn a)", 3, '"=", "~=", ">=" or "<="'],
    ["(c n=a)", 2, '"=", "~=", ">=" or "<="'],
    ["(cn=a\\2)", 6, "two hexadecimal digits after \\"],
    ["(cn=a\\zz)", 6, "two hexadecimal digits after \\"],
    ["(cn=a(b)", 5, '")"'],
    ["(cn>=a*)", 6, '")"'],
    ["(cn~=*)", 5, '")"'],
    ["(!(cn=a)(sn=b))", 8, '")"'],
    ["(|(cn=a)x)", 8, '"(" or ")"'],
    ["(cn=a\0)", 5, '")"'],
    ["(cn;=a)", 3, '"=", "~=", ">=" or "<="'],
  ];
  for (const [text, position, expected] of cases) {
    const error = thrown(() => parseLdapFilter(text));
    t.type(error, FilterSyntaxError, text);
    t.match(
      error,
      { position, expected, format: "ldap", code: "ANNAL_FILTER_SYNTAX", status: 400 },
      text,
    );
  }
  t.equal(
    (thrown(() => parseLdapFilter("(&(cn=a)(sn=b)")) as Error).message,
    'filter: expected "(" or ")" at position 14',
  );
});

t.test("extensible match and non-UTF-8 values are refused as unsupported", async (t) => {
  const cases: [string, number][] = [
    ["(cn:caseExactMatch:=Fred Flintstone)", 3],
    ["(cn:=Betty Rubble)", 3],
    ["(sn:dn:2.4.6.8.10:=Barney Rubble)", 3],
    ["(:1.2.3:=Wilma Flintstone)", 1],
    ["(cn=ok\\ff\\fe)", 6],
  ];
  for (const [text, position] of cases) {
    const error = thrown(() => parseLdapFilter(text));
    t.type(error, FilterUnsupportedError, text);
    t.match(error, { position, code: "ANNAL_FILTER_UNSUPPORTED", status: 400 }, text);
  }
});
