import fc from "fast-check";
import t from "tap";
import type { FilterNode } from "../../src/filters/index.ts";
import { AnnalError } from "../../src/errors/index.ts";
import {
  compileFilterToSql,
  FilterSyntaxError,
  parseFilter,
  type FilterFormat,
} from "../../src/filters/index.ts";
import { and, eq } from "./fixtures/ast.ts";

/** Characters and words that mean something in one of the four languages. */
const TRICKY = [
  ...'"\\*()[]{}:,=!<>~&| \t\n\0',
  "or",
  "OR",
  "and",
  "AND",
  "not",
  "NOT",
  "eq",
  "pr",
  ")",
  '"',
  "\\2a",
  "\\\\",
  '\\"',
  "$and",
  "null",
  "true",
  "é",
  "😀",
];
const trickyText = fc.string({ unit: fc.constantFrom(...TRICKY), maxLength: 12 });

/** Any text: arbitrary code points, filter punctuation, and now and then a lone surrogate. */
const anyValue = fc.oneof(
  fc.string({ unit: "binary", maxLength: 20 }),
  trickyText,
  fc.string({
    unit: fc.oneof(
      fc.constantFrom("\ud800", "\udfff"),
      fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
    ),
    maxLength: 6,
  }),
);
/** Text that UTF-8 can carry (LDAP values are UTF-8 bytes): no lone surrogates. */
const utf8Value = fc.oneof(fc.string({ unit: "binary", maxLength: 20 }), trickyText);
const attributeName = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,12}$/);

function escapeLdap(value: string): string {
  return value.replace(/[\\*()\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}
function escapeLdapBytes(value: string): string {
  return [...Buffer.from(value, "utf8")]
    .map((b) => `\\${b.toString(16).padStart(2, "0")}`)
    .join("");
}
const quoteExpression = (value: string) => `"${value.replace(/[\\"*]/g, "\\$&")}"`;

/** Per format: how to write `attribute = value` so that the value is only ever a value. */
const RENDERERS: [FilterFormat, fc.Arbitrary<string>, (a: string, v: string) => string][] = [
  ["json", anyValue, (a, v) => JSON.stringify({ [a]: v })],
  ["ldap", utf8Value, (a, v) => `(${a}=${escapeLdap(v)})`],
  ["ldap", utf8Value, (a, v) => `(${a}=${escapeLdapBytes(v)})`],
  ["expression", anyValue, (a, v) => `${a} = ${quoteExpression(v)}`],
  ["scim", anyValue, (a, v) => `${a} eq ${JSON.stringify(v)}`],
];
const RENDER_AND: Record<FilterFormat, (one: string, two: string) => string> = {
  json: (one, two) => `{"$and":[${one},${two}]}`,
  ldap: (one, two) => `(&${one}${two})`,
  expression: (one, two) => `${one} AND ${two}`,
  scim: (one, two) => `${one} and ${two}`,
};

t.test("any text either parses or fails with a 400 AnnalError", async (t) => {
  const filterish = fc.string({
    unit: fc.constantFrom(
      ..."(){}[]&|!=~<>*\\\"':,. \tacnsqeprotdlAND0123$u".split(""),
      "or",
      "and",
      "not",
      "eq",
      "pr",
      "null",
    ),
    maxLength: 40,
  });
  const property = fc.property(
    fc.oneof(fc.string({ unit: "binary", maxLength: 40 }), filterish, anyValue),
    (text) => {
      try {
        const { ast } = parseFilter(text);
        return typeof ast.op === "string";
      } catch (error) {
        if (!(error instanceof AnnalError) || error.status !== 400) throw error;
        if (error instanceof FilterSyntaxError) {
          return error.position >= 0 && error.position <= text.length;
        }
        return true;
      }
    },
  );
  fc.assert(property, { numRuns: 5000 });
  t.pass("5000 inputs");
});

t.test("a mutilated valid filter still parses or fails with a 400", async (t) => {
  const valid = [
    '{"sn":"Smith","$or":[{"cn":"Ann"},{"mail":null}]}',
    "(&(sn=Smith)(|(cn=A*n*)(!(mail=*))))",
    'sn = Smith AND (cn = "Ann \\"x\\"" OR mail != *)',
    'sn eq "Smith" and (cn co "Ann" or not (mail pr))',
  ];
  const property = fc.property(
    fc.constantFrom(...valid),
    fc.array(fc.tuple(fc.nat(), fc.nat(3), fc.constantFrom(...TRICKY)), { maxLength: 4 }),
    (base, edits) => {
      let text = base;
      for (const [at, cut, insert] of edits) {
        const i = at % (text.length + 1);
        text = text.slice(0, i) + insert + text.slice(i + cut);
      }
      try {
        parseFilter(text);
      } catch (error) {
        if (!(error instanceof AnnalError) || error.status !== 400) throw error;
      }
    },
  );
  fc.assert(property, { numRuns: 3000 });
  t.pass("3000 mutations");
});

t.test("a properly written value never changes the filter's structure", async (t) => {
  for (const [format, values, render] of RENDERERS) {
    fc.assert(
      fc.property(attributeName, values, (attribute, value) => {
        const parsed = parseFilter(render(attribute, value));
        return parsed.format === format && isSame(parsed.ast, eq(attribute, value));
      }),
      { numRuns: 1500 },
    );
    fc.assert(
      fc.property(attributeName, values, values, (attribute, one, two) => {
        const text = RENDER_AND[format](render(attribute, one), render(`${attribute}x`, two));
        const parsed = parseFilter(text);
        return (
          parsed.format === format &&
          isSame(parsed.ast, and(eq(attribute, one), eq(`${attribute}x`, two)))
        );
      }),
      { numRuns: 1000 },
    );
    t.pass(`${format}: values round-trip as single comparisons`);
  }
});

const isSame = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

const anyFilter: fc.Arbitrary<FilterNode> = fc.letrec<{ node: FilterNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({
      op: fc.constantFrom("eq", "approx", "ge", "le", "gt", "lt"),
      attribute: anyValue,
      value: anyValue,
    }),
    fc.record({ op: fc.constant("present"), attribute: anyValue }),
    fc.record(
      {
        op: fc.constant("substring"),
        attribute: anyValue,
        initial: anyValue,
        any: fc.array(anyValue, { maxLength: 3 }),
        final: anyValue,
      },
      { requiredKeys: ["op", "attribute", "any"] },
    ),
    fc.record({ op: fc.constant("not"), filter: tie("node") }),
    fc.record({
      op: fc.constantFrom("and", "or"),
      filters: fc.array(tie("node"), { maxLength: 3 }),
    }),
  ) as fc.Arbitrary<FilterNode>,
})).node;

/**
 * The same tree with every name and value replaced: only its shape is left, and which of its
 * names are the same (an `or`'s equalities on one attribute are compiled as one test).
 */
function skeleton(node: FilterNode, names = new Map<string, string>()): FilterNode {
  const name = (attribute: string) => {
    if (!names.has(attribute)) names.set(attribute, "x".repeat(names.size + 1));
    return names.get(attribute)!;
  };
  switch (node.op) {
    case "and":
    case "or":
      return { op: node.op, filters: node.filters.map((part) => skeleton(part, names)) };
    case "not":
      return { op: "not", filter: skeleton(node.filter, names) };
    case "present":
      return { op: "present", attribute: name(node.attribute) };
    case "substring":
      return { op: "substring", attribute: name(node.attribute), any: node.any.map(() => "x") };
    default:
      return { op: node.op, attribute: name(node.attribute), value: "x" };
  }
}

t.test("compiled SQL holds no name or value, only one placeholder per parameter", async (t) => {
  fc.assert(
    fc.property(anyFilter, fc.array(fc.anything(), { maxLength: 3 }), (ast, before) => {
      const params: unknown[] = [...before];
      const sql = compileFilterToSql(ast, { attributesColumn: "e.attributes", params });
      const shapeOnly = compileFilterToSql(skeleton(ast), {
        attributesColumn: "e.attributes",
        params: [...before],
      });
      // The text depends on the tree's shape alone, so no name or value can be in it ...
      if (sql !== shapeOnly) return false;
      // ... and it is plain ASCII, whatever the values held.
      if (!/^[\x20-\x7e]*$/.test(sql)) return false;
      const placeholders = [...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]));
      const pushed = params.length - before.length;
      const expected = Array.from({ length: pushed }, (_, i) => before.length + i + 1);
      return (
        isSame(placeholders, expected) &&
        params
          .slice(before.length)
          .every(
            (p) =>
              typeof p === "string" ||
              (Array.isArray(p) && p.every((value) => typeof value === "string")),
          )
      );
    }),
    { numRuns: 3000 },
  );
  t.pass("3000 filters");
});
