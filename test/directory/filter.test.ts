import fc from "fast-check";
import {
  AndFilter,
  ApproximateFilter,
  EqualityFilter,
  FilterParser,
  GreaterThanEqualsFilter,
  LessThanEqualsFilter,
  NotFilter,
  OrFilter,
  PresenceFilter,
  SubstringFilter,
  type Filter,
} from "ldapts";
import t from "tap";
import {
  and,
  approx,
  eq,
  eqBytes,
  escapeFilterValue,
  ge,
  le,
  not,
  or,
  present,
  renderFilter,
  substring,
} from "../../src/directory/index.ts";
import { toWireFilter } from "../../src/directory/wire-filter.ts";
import { type FilterNode } from "../../src/filters/index.ts";

t.test("renderFilter writes RFC 4515 filters", async (t) => {
  t.equal(renderFilter(eq("uid", "alice")), "(uid=alice)");
  t.equal(
    renderFilter(and(eq("objectClass", "person"), or(ge("age", "18"), not(present("mail"))))),
    "(&(objectClass=person)(|(age>=18)(!(mail=*))))",
  );
  t.equal(renderFilter(approx("cn", "Jon")), "(cn~=Jon)");
  t.equal(renderFilter(le("2.5.4.3", "m")), "(2.5.4.3<=m)", "numeric OIDs are attribute names too");
  t.equal(
    renderFilter(substring("cn", { initial: "Al", any: ["ic"], final: "e" })),
    "(cn=Al*ic*e)",
  );
  t.equal(renderFilter(substring("cn", { any: ["x"] })), "(cn=*x*)");
  t.equal(renderFilter(substring("cn", {})), "(cn=*)", "a substring with no parts is presence");
  t.equal(renderFilter({ op: "gt", attribute: "n", value: "5" }), "(&(n>=5)(!(n=5)))");
  t.equal(renderFilter({ op: "lt", attribute: "n", value: "5" }), "(&(n<=5)(!(n=5)))");
  t.equal(renderFilter(and()), "(&)", "absolute true (RFC 4526)");
  t.equal(renderFilter(or()), "(|)", "absolute false (RFC 4526)");
});

t.test("values are escaped: * ( ) \\ NUL and control characters; Unicode stays", async (t) => {
  t.equal(escapeFilterValue("a*b(c)d\\e\0f"), "a\\2ab\\28c\\29d\\5ce\\00f");
  t.equal(escapeFilterValue("line\nbreak\x7f"), "line\\0abreak\\7f");
  t.equal(escapeFilterValue("Zoë 😀 &|!=<>~"), "Zoë 😀 &|!=<>~");
  t.equal(renderFilter(eq("cn", "*)(uid=*")), "(cn=\\2a\\29\\28uid=\\2a)");
  t.equal(renderFilter(substring("cn", { initial: "a*", final: "(b)" })), "(cn=a\\2a*\\28b\\29)");
});

t.test("attribute names other than descr or numeric OID are rejected with a 400", async (t) => {
  for (const bad of ["", "cn)(uid=*", "c n", "1abc", "cn;lang-de", "1.", "01.2", "cn=", "ü"]) {
    t.throws(
      () => renderFilter(eq(bad, "x")),
      { code: "ANNAL_FILTER_ATTRIBUTE_INVALID", status: 400 },
      JSON.stringify(bad),
    );
  }
  t.throws(() => renderFilter(and(eq("cn", "x"), present("bad name"))), {
    code: "ANNAL_FILTER_ATTRIBUTE_INVALID",
  });
});

t.test("a value with an unpaired surrogate is rejected with a 400", async (t) => {
  t.throws(() => renderFilter(eq("cn", "a\ud800b")), {
    code: "ANNAL_FILTER_VALUE_INVALID",
    status: 400,
  });
});

t.test(
  "bytes are compared as bytes: every byte escaped in the text, sent as they are",
  async (t) => {
    const guid = Buffer.from("67452301ab89efcd0123456789abcdef", "hex");
    t.equal(
      renderFilter(eqBytes("objectGUID", guid)),
      "(objectGUID=\\67\\45\\23\\01\\ab\\89\\ef\\cd\\01\\23\\45\\67\\89\\ab\\cd\\ef)",
    );
    const wire = toWireFilter(eqBytes("objectGUID", guid)) as EqualityFilter;
    t.ok(Buffer.isBuffer(wire.value), "the wire's value is the bytes, not their UTF-8");
    t.same(wire.value, guid);
    t.throws(
      () => renderFilter({ op: "ge", attribute: "objectGUID", value: "AA==", binary: true }),
      /equality only/,
    );
  },
);

/** Values heavy in filter syntax, plus any Unicode. */
const value = fc.string({
  unit: fc.oneof(
    fc.constantFrom("*", "(", ")", "\\", "\0", "&", "|", "!", "=", "<", ">", "~", ":", "é", "😀"),
    fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
  ),
});
// ldapts' parser reads attribute names as [\w-]+, so these tests use descr names only.
const attribute = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,8}$/);
const nonEmpty = value.filter((v) => v !== "");

const filterTree: fc.Arbitrary<FilterNode> = fc.letrec<{ node: FilterNode }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.record({
      op: fc.constantFrom("eq", "approx", "ge", "le"),
      attribute,
      value,
    }) as fc.Arbitrary<FilterNode>,
    fc.record({ op: fc.constant("present"), attribute }) as fc.Arbitrary<FilterNode>,
    fc
      .record({
        attribute,
        initial: fc.option(nonEmpty, { nil: undefined }),
        any: fc.array(nonEmpty, { maxLength: 3 }),
        final: fc.option(nonEmpty, { nil: undefined }),
      })
      .filter((s) => s.initial !== undefined || s.any.length > 0 || s.final !== undefined)
      .map((s) => substring(s.attribute, s)),
    fc.array(tie("node"), { minLength: 1, maxLength: 3 }).map((filters) => and(...filters)),
    fc.array(tie("node"), { minLength: 1, maxLength: 3 }).map((filters) => or(...filters)),
    tie("node").map(not),
  ),
})).node;

/** What ldapts' parser should make of the rendered filter, in a comparable shape. */
function expected(node: FilterNode): unknown {
  switch (node.op) {
    case "and":
    case "or":
      return { op: node.op, filters: node.filters.map(expected) };
    case "not":
      return { op: "not", filter: expected(node.filter) };
    case "present":
      return { op: "present", attribute: node.attribute };
    case "substring":
      return {
        op: "substring",
        attribute: node.attribute,
        initial: node.initial ?? "",
        any: [...node.any],
        final: node.final ?? "",
      };
    case "gt":
    case "lt":
      throw new Error("not generated");
    default:
      return { op: node.op, attribute: node.attribute, value: node.value };
  }
}

function parsed(filter: Filter): unknown {
  if (filter instanceof AndFilter) return { op: "and", filters: filter.filters.map(parsed) };
  if (filter instanceof OrFilter) return { op: "or", filters: filter.filters.map(parsed) };
  if (filter instanceof NotFilter) return { op: "not", filter: parsed(filter.filter) };
  if (filter instanceof PresenceFilter) return { op: "present", attribute: filter.attribute };
  if (filter instanceof SubstringFilter) {
    const { attribute, initial, any, final } = filter;
    return { op: "substring", attribute, initial, any, final };
  }
  const op =
    filter instanceof EqualityFilter
      ? "eq"
      : filter instanceof ApproximateFilter
        ? "approx"
        : filter instanceof GreaterThanEqualsFilter
          ? "ge"
          : filter instanceof LessThanEqualsFilter
            ? "le"
            : "unknown";
  const f = filter as EqualityFilter;
  return { op, attribute: f.attribute, value: f.value };
}

t.test("no value can change a filter's structure: ldapts parses back the same tree", async () => {
  fc.assert(
    fc.property(filterTree, (node) => {
      const text = renderFilter(node);
      const back = parsed(FilterParser.parseString(text));
      if (JSON.stringify(back) !== JSON.stringify(expected(node))) {
        throw new Error(`${text} parsed as ${JSON.stringify(back)}`);
      }
    }),
    { numRuns: 3000 },
  );
});

t.test("any value round-trips through escaping", async () => {
  fc.assert(
    fc.property(value, (v) => {
      const escaped = escapeFilterValue(v);
      // outside escapes, no syntax character survives
      const bare = escaped.replace(/\\[0-9a-f]{2}/g, "");
      const decoded = escaped.replace(/\\([0-9a-f]{2})/g, (_, hex: string) =>
        String.fromCharCode(parseInt(hex, 16)),
      );
      return !/[()*\\\0]/.test(bare) && decoded === v;
    }),
    { numRuns: 3000 },
  );
});

t.test("structural parentheses match the tree whatever the values", async () => {
  const count = (node: FilterNode): number => {
    switch (node.op) {
      case "and":
      case "or":
        return 1 + node.filters.reduce((sum, child) => sum + count(child), 0);
      case "not":
        return 1 + count(node.filter);
      default:
        return 1;
    }
  };
  fc.assert(
    fc.property(filterTree, (node) => {
      const text = renderFilter(node);
      return (
        (text.match(/\(/g) ?? []).length === count(node) &&
        (text.match(/\)/g) ?? []).length === count(node)
      );
    }),
    { numRuns: 2000 },
  );
});
