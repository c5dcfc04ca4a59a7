import t from "tap";
import { FilterSyntaxError, parseExpressionFilter } from "../../src/filters/index.ts";
import type { FilterNode } from "../../src/filters/index.ts";
import { and, eq, not, or, present, substring, thrown } from "./fixtures/ast.ts";

t.test("default expressions parse to the filter tree", async (t) => {
  const cases: [string, FilterNode][] = [
    ["cn = Ann", eq("cn", "Ann")],
    ["cn=Ann", eq("cn", "Ann")],
    ['cn = "Ann Smith"', eq("cn", "Ann Smith")],
    ['cn = ""', eq("cn", "")],
    ["cn != Ann", not(eq("cn", "Ann"))],
    ["age >= 30", { op: "ge", attribute: "age", value: "30" }],
    ["age <= 30", { op: "le", attribute: "age", value: "30" }],
    ["age > 30", { op: "gt", attribute: "age", value: "30" }],
    ["age < 30", { op: "lt", attribute: "age", value: "30" }],
    ["cn ~= an", { op: "approx", attribute: "cn", value: "an" }],
    ["cn = Ann*", substring("cn", { initial: "Ann" })],
    ["cn = *nn", substring("cn", { final: "nn" })],
    ["cn = *n*", substring("cn", { any: ["n"] })],
    ["cn = A*n*a", substring("cn", { initial: "A", any: ["n"], final: "a" })],
    ['cn = "A *"', substring("cn", { initial: "A " })],
    ["cn != A*", not(substring("cn", { initial: "A" }))],
    ["mail = *", present("mail")],
    ["mail != *", not(present("mail"))],
    ['cn = "a\\*b"', eq("cn", "a*b")],
    ['cn = "a\\"b\\\\c"', eq("cn", 'a"b\\c')],
    ['age >= "3\\*"', { op: "ge", attribute: "age", value: "3*" }],
    ["path = C:\\dir\\x", eq("path", "C:\\dir\\x")],
    ["mail = ann@example.com", eq("mail", "ann@example.com")],
    ["url = http://x/?a=b", eq("url", "http://x/?a=b")],
    ["cn;lang-de = x", eq("cn;lang-de", "x")],
    ["2.5.4.3 = x", eq("2.5.4.3", "x")],
    ["a = OR", eq("a", "OR")],
    ["not = 1", eq("not", "1")],
    ["NOT not = 1", not(eq("not", "1"))],
    ["NOT NOT a = 1", not(not(eq("a", "1")))],
    ["NOT(a = 1)", not(eq("a", "1"))],
    ['a="x"AND b=2', and(eq("a", "x"), eq("b", "2"))],
    ["a = 1 AND b = 2 AND c = 3", and(eq("a", "1"), eq("b", "2"), eq("c", "3"))],
    ["a = 1 and b = 2 Or c = 3", or(and(eq("a", "1"), eq("b", "2")), eq("c", "3"))],
    [" ( ( a = 1 ) ) ", eq("a", "1")],
    ["ANDY = 1 AND ORA = 2", and(eq("ANDY", "1"), eq("ORA", "2"))],
  ];
  for (const [text, ast] of cases) t.same(parseExpressionFilter(text), ast, text);
});

t.test("AND binds tighter than OR, and NOT tighter than both", async (t) => {
  const a = eq("a", "1");
  const b = eq("b", "2");
  const c = eq("c", "3");
  t.same(parseExpressionFilter("a = 1 OR b = 2 AND c = 3"), or(a, and(b, c)));
  t.same(parseExpressionFilter("a = 1 AND b = 2 OR c = 3"), or(and(a, b), c));
  t.same(parseExpressionFilter("(a = 1 OR b = 2) AND c = 3"), and(or(a, b), c));
  t.same(parseExpressionFilter("NOT a = 1 AND b = 2"), and(not(a), b));
  t.same(parseExpressionFilter("NOT (a = 1 AND b = 2)"), not(and(a, b)));
  t.same(parseExpressionFilter("a = 1 OR NOT b = 2 AND c = 3"), or(a, and(not(b), c)));
});

t.test("malformed expressions report the position and what was expected", async (t) => {
  const cases: [string, number, string][] = [
    ["cn =", 4, "a value"],
    ["cn = ", 5, "a value"],
    ["cn", 2, "an operator (=, !=, <, <=, >, >=, ~=)"],
    ["cn eq x", 3, "an operator (=, !=, <, <=, >, >=, ~=)"],
    ["= x", 0, "an attribute name"],
    ['cn = "abc', 9, 'a closing quote (")'],
    ['cn = "a\\nb"', 8, 'an escape: \\" \\\\ or \\*'],
    ["(a = 1", 6, '"AND", "OR" or ")"'],
    ["a = 1)", 5, '"AND", "OR" or the end of the filter'],
    ["a = 1 AND", 9, "an attribute name"],
    ["a = 1 AND (", 11, "an attribute name"],
    ["cn = John Smith", 10, '"AND", "OR" or the end of the filter'],
    ["age >= 3*", 8, "a value without wildcards"],
    ["cn ~= *a", 6, "a value without wildcards"],
    ["a == 1", 3, "a value"],
    ["a = 1 ANDb = 2", 6, '"AND", "OR" or the end of the filter'],
    ['a = x"y"', 5, '"AND", "OR" or the end of the filter'],
  ];
  for (const [text, position, expected] of cases) {
    const error = thrown(() => parseExpressionFilter(text));
    t.type(error, FilterSyntaxError, text);
    t.match(error, { position, expected, format: "expression", status: 400 }, text);
  }
  t.match(
    thrown(() => parseExpressionFilter("cn = John Smith")),
    {
      hint: /Quote a value that contains blanks/,
    },
  );
});
