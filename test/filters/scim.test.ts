import t from "tap";
import {
  FilterSyntaxError,
  FilterUnsupportedError,
  parseScimFilter,
} from "../../src/filters/index.ts";
import type { FilterNode } from "../../src/filters/index.ts";
import { and, eq, not, or, present, substring, thrown } from "./fixtures/ast.ts";

t.test("SCIM filters parse to the filter tree (RFC 7644 examples and more)", async (t) => {
  const cases: [string, FilterNode][] = [
    ['userName eq "bjensen"', eq("userName", "bjensen")],
    [`name.familyName co "O'Malley"`, substring("name.familyName", { any: ["O'Malley"] })],
    ['userName sw "J"', substring("userName", { initial: "J" })],
    ['userName ew "sen"', substring("userName", { final: "sen" })],
    [
      'urn:ietf:params:scim:schemas:core:2.0:User:userName sw "J"',
      substring("userName", { initial: "J" }),
    ],
    ["title pr", present("title")],
    [
      'meta.lastModified gt "2011-05-13T04:42:34Z"',
      { op: "gt", attribute: "meta.lastModified", value: "2011-05-13T04:42:34Z" },
    ],
    ['meta.lastModified ge "2011"', { op: "ge", attribute: "meta.lastModified", value: "2011" }],
    ['meta.lastModified lt "2011"', { op: "lt", attribute: "meta.lastModified", value: "2011" }],
    ['meta.lastModified le "2011"', { op: "le", attribute: "meta.lastModified", value: "2011" }],
    ['title pr and userType eq "Employee"', and(present("title"), eq("userType", "Employee"))],
    ['title pr or userType eq "Intern"', or(present("title"), eq("userType", "Intern"))],
    [
      'schemas eq "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"',
      eq("schemas", "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"),
    ],
    [
      'userType eq "Employee" and (emails co "example.com" or emails.value co "example.org")',
      and(
        eq("userType", "Employee"),
        or(
          substring("emails", { any: ["example.com"] }),
          substring("emails.value", { any: ["example.org"] }),
        ),
      ),
    ],
    [
      'userType ne "Employee" and not (emails co "example.com" or emails.value co "example.org")',
      and(
        not(eq("userType", "Employee")),
        not(
          or(
            substring("emails", { any: ["example.com"] }),
            substring("emails.value", { any: ["example.org"] }),
          ),
        ),
      ),
    ],
    ['userName EQ "x" AND title PR', and(eq("userName", "x"), present("title"))],
    ["age eq 42", eq("age", "42")],
    ["ratio eq -1.50e3", eq("ratio", "-1.50e3")],
    ["active eq true", eq("active", "true")],
    ["active eq FALSE", eq("active", "false")],
    ["manager eq null", not(present("manager"))],
    ["manager ne null", present("manager")],
    ['cn co ""', present("cn")],
    ["not (a pr)", not(present("a"))],
    ["NOT(a pr)", not(present("a"))],
    ["not pr", present("not")],
    ['a eq "x\\"y\\u00e9\\n*"', eq("a", 'x"yé\n*')],
    ['a eq"x"', eq("a", "x")],
    ["((a pr))", present("a")],
  ];
  for (const [text, ast] of cases) t.same(parseScimFilter(text), ast, text);
});

t.test("SCIM precedence: not, then and, then or", async (t) => {
  const a = eq("a", "1");
  const b = eq("b", "2");
  const c = eq("c", "3");
  t.same(parseScimFilter('a eq "1" or b eq "2" and c eq "3"'), or(a, and(b, c)));
  t.same(parseScimFilter('a eq "1" and b eq "2" or c eq "3"'), or(and(a, b), c));
  t.same(parseScimFilter('(a eq "1" or b eq "2") and c eq "3"'), and(or(a, b), c));
  t.same(parseScimFilter('not (a eq "1") and b eq "2"'), and(not(a), b));
  t.same(parseScimFilter('a eq "1" or not (b eq "2") and c eq "3"'), or(a, and(not(b), c)));
});

t.test("malformed SCIM filters report the position and what was expected", async (t) => {
  const operator = "an operator (eq, ne, co, sw, ew, pr, gt, ge, lt, le)";
  const value = "a value (a JSON string, a number, true, false or null)";
  const cases: [string, number, string][] = [
    ["userName eq bjensen", 12, value],
    ['userName equals "x"', 9, operator],
    ['userName = "x"', 9, operator],
    ["title pr and", 12, "an attribute name"],
    ["(title pr", 9, '"and", "or" or ")"'],
    ["title pr)", 8, '"and", "or" or the end of the filter'],
    ['a eq "x', 7, 'a closing quote (")'],
    ['a eq "\\x"', 7, 'an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX'],
    ['a eq "\\u12"', 8, "four hexadecimal digits after \\u"],
    ["not title pr", 4, operator],
    ["a gt null", 5, "a JSON string or number"],
    ['a eq "x" b eq "y"', 9, '"and", "or" or the end of the filter'],
    ['urn:x: eq "y"', 6, "an attribute name after the schema URN"],
    ["", 0, "an attribute name"],
  ];
  for (const [text, position, expected] of cases) {
    const error = thrown(() => parseScimFilter(text));
    t.type(error, FilterSyntaxError, text);
    t.match(error, { position, expected, format: "scim", status: 400 }, text);
  }
});

t.test("SCIM value paths are refused as unsupported", async (t) => {
  const error = thrown(() =>
    parseScimFilter('userType eq "Employee" and emails[type eq "work" and value co "@x"]'),
  );
  t.type(error, FilterUnsupportedError);
  t.match(error, { position: 33, code: "ANNAL_FILTER_UNSUPPORTED", status: 400 });
});
