import t from "tap";
import {
  FilterSyntaxError,
  FilterTooComplexError,
  FilterUnsupportedError,
  MAX_FILTER_DEPTH,
  MAX_FILTER_LENGTH,
  parseFilter,
} from "../../src/filters/index.ts";
import { and, eq, not, or, present, thrown } from "./fixtures/ast.ts";

t.test("the format is chosen by the first non-blank characters (the spec's table)", async (t) => {
  const cases: [string, string][] = [
    ['{"cn":"a"}', "json"],
    ['[{"cn":"a"}]', "json"],
    ['  \n {"cn":"a"}', "json"],
    ["(cn=a)", "ldap"],
    ["\t(&(cn=a)(sn=b))", "ldap"],
    ["cn = a", "expression"],
    ["cn=a", "expression"],
    ['NOT cn = "a" OR sn != *', "expression"],
    ['cn eq "a"', "scim"],
    ["title pr", "scim"],
    ['not (title pr) and sn co "x"', "scim"],
    // `(` is LDAP when an LDAP filter starts so; otherwise the expression or SCIM.
    ["(cn = a) OR (sn = b)", "expression"],
    ["(age>5)", "expression"],
    ["((a = 1 OR b = 2) AND c = 3)", "expression"],
    ['(title pr) and (sn eq "x")', "scim"],
    ["(age>=5)", "ldap"],
    ["(!(cn=a))", "ldap"],
  ];
  for (const [text, format] of cases) t.equal(parseFilter(text).format, format, text);
});

t.test("inside an LDAP item everything up to the closing parenthesis is the value", async (t) => {
  t.same(parseFilter("(cn=a OR b=c)"), { format: "ldap", ast: eq("cn", "a OR b=c") });
});

t.test("each format yields the same tree for the same condition", async (t) => {
  const expected = and(eq("sn", "Smith"), or(eq("cn", "Ann"), not(present("mail"))));
  for (const text of [
    '{"sn":"Smith","$or":[{"cn":"Ann"},{"mail":null}]}',
    "(&(sn=Smith)(|(cn=Ann)(!(mail=*))))",
    "sn = Smith AND (cn = Ann OR mail != *)",
    'sn eq "Smith" and (cn eq "Ann" or mail eq null)',
  ]) {
    t.same(parseFilter(text).ast, expected, text);
  }
});

t.test("an unreadable filter is reported in its most plausible format", async (t) => {
  const cases: [string, string, number, string][] = [
    // SCIM read furthest: the writer mixed `=` into a SCIM filter.
    ['cn eq "a" and sn = "b"', "scim", 17, "an operator (eq, ne, co, sw, ew, pr, gt, ge, lt, le)"],
    ['cn = "a" AND sn eq "b"', "expression", 16, "an operator (=, !=, <, <=, >, >=, ~=)"],
    ["cn", "expression", 2, "an operator (=, !=, <, <=, >, >=, ~=)"],
    ['cn eq "a', "scim", 8, 'a closing quote (")'],
    ["(&(cn=a)(sn=b)", "ldap", 14, '"(" or ")"'],
    ["(cn=a) AND (sn=b)", "ldap", 7, "the end of the filter"],
    ["(cn=a\\zz)", "ldap", 6, "two hexadecimal digits after \\"],
    ["(age>5", "expression", 6, '"AND", "OR" or ")"'],
    ['(cn = "a"', "expression", 9, '"AND", "OR" or ")"'],
    ["(title pr", "scim", 9, '"and", "or" or ")"'],
    ['{"cn":', "json", 6, "a JSON value"],
    ["", "expression", 0, "a filter"],
    [" \t\n", "expression", 3, "a filter"],
  ];
  for (const [text, format, position, expected] of cases) {
    const error = thrown(() => parseFilter(text));
    t.type(error, FilterSyntaxError, text);
    t.match(error, { format, position, expected, code: "ANNAL_FILTER_SYNTAX", status: 400 }, text);
  }
  t.equal(
    (thrown(() => parseFilter('(cn = "a"')) as Error).message,
    'filter: expected "AND", "OR" or ")" at position 9',
  );
});

t.test("unsupported features are final, whichever language meets them", async (t) => {
  t.type(
    thrown(() => parseFilter("(cn:dn:=x)")),
    FilterUnsupportedError,
  );
  t.type(
    thrown(() => parseFilter('emails[type eq "work"]')),
    FilterUnsupportedError,
  );
});

t.test("filters longer than the limit are refused as too complex", async (t) => {
  const atLimit = `cn = "${"a".repeat(MAX_FILTER_LENGTH - 7)}"`;
  t.equal(atLimit.length, MAX_FILTER_LENGTH);
  t.equal(parseFilter(atLimit).format, "expression");
  const error = thrown(() => parseFilter(atLimit + " "));
  t.type(error, FilterTooComplexError);
  t.match(error, { code: "ANNAL_FILTER_TOO_COMPLEX", status: 400, limit: "length" });
});

t.test("filters nested deeper than the limit are refused as too complex", async (t) => {
  const nest = (depth: number, open: string, leaf: string, close: string) =>
    open.repeat(depth) + leaf + close.repeat(depth);
  const shapes: [string, (depth: number) => string][] = [
    ["ldap", (d) => nest(d, "(!", "(cn=a)", ")")],
    ["expression NOT", (d) => nest(d, "NOT ", "cn = a", "")],
    ["expression OR", (d) => nest(d, "a = 1 OR (", "c = 3", ")")],
    ["scim", (d) => nest(d, "not (", "cn pr", ")")],
    ["json", (d) => nest(d, '{"$not":', '{"cn":"a"}', "}")],
    ["json arrays", (d) => nest(d, '{"$and":[', '{"cn":"a"}', "]}")],
  ];
  for (const [name, shape] of shapes) {
    t.doesNotThrow(() => parseFilter(shape(MAX_FILTER_DEPTH)), `${name} at the limit`);
    const error = thrown(() => parseFilter(shape(MAX_FILTER_DEPTH + 1)));
    t.type(error, FilterTooComplexError, `${name} past the limit`);
    t.match(error, { code: "ANNAL_FILTER_TOO_COMPLEX", status: 400, limit: "depth" }, name);
  }
});

t.test("redundant parentheses cost nesting but not depth", async (t) => {
  t.same(parseFilter("(".repeat(60) + "a = 1" + ")".repeat(60)).ast, eq("a", "1"));
  t.type(
    thrown(() => parseFilter("(".repeat(70) + "a = 1" + ")".repeat(70))),
    FilterTooComplexError,
  );
});

t.test("thousands of open brackets never exhaust the stack", async (t) => {
  for (const text of [
    "(".repeat(4000),
    "(&".repeat(2000),
    "(!".repeat(2000),
    "NOT ".repeat(1000),
    "not (".repeat(800),
    "[".repeat(4000),
    '{"$not":'.repeat(500),
    "((((".repeat(1000) + "a = 1",
  ]) {
    const error = thrown(() => parseFilter(text));
    t.ok(
      error instanceof FilterTooComplexError || error instanceof FilterSyntaxError,
      text.slice(0, 12),
    );
  }
});
