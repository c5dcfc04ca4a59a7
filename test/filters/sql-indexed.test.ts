import fc from "fast-check";
import t from "tap";
import {
  compileFilterToIndexedSql,
  compileValueTest,
  parseFilter,
  type FilterNode,
} from "../../src/filters/index.ts";
import { thrown } from "./fixtures/ast.ts";

const VALUES = '"projection_entries"."entry_values"';
const options = (params: unknown[]) => ({
  valuesTable: VALUES,
  entryColumn: "e.entry_uuid",
  typeParam: "$1",
  keyLength: 200,
  params,
});
const compile = (text: string) => {
  const params: unknown[] = ["user"];
  return { sql: compileFilterToIndexedSql(parseFilter(text).ast, options(params)), params };
};
const rows = `FROM ${VALUES} AS x WHERE x.type = $1`;

t.test("a comparison is a semi-join on the values of its attribute", async (t) => {
  t.same(compile("uid = U123"), {
    sql: `e.entry_uuid IN (SELECT x.entry_uuid ${rows} AND x.attribute = $2::text AND x.value_key = lower($3::text))`,
    params: ["user", "uid", "U123"],
  });
  t.same(
    compile("mail = *").sql,
    `e.entry_uuid IN (SELECT x.entry_uuid ${rows} AND x.attribute = $2::text)`,
  );
  t.match(compile("n > 5").sql, /x\.value_key > lower\(\$3::text\)\)$/);
  t.match(compile("cn ~= ann").sql, /x\.value_key = lower\(\$3::text\)\)$/);
});

t.test("long values are also compared whole, beyond the key", async (t) => {
  const long = "x".repeat(70);
  t.match(
    compile(`cn = "${long}"`).sql,
    /x\.value_key = left\(lower\(\$3::text\), 200\) AND coalesce\(x\.value_folded, x\.value_key\) = lower\(\$3::text\)/,
  );
  t.match(
    compile(`cn gt "${long}"`).sql,
    /x\.value_key >= left\(lower\(\$3::text\), 200\) AND coalesce\(x\.value_folded, x\.value_key\) > lower\(\$3::text\)/,
  );
});

t.test(
  "substrings match the whole folded value; an initial piece also bounds the key",
  async (t) => {
    const { sql, params } = compile("cn = a%*b_*c");
    t.match(
      sql,
      /x\.value_key LIKE lower\(\$4::text\) AND coalesce\(x\.value_folded, x\.value_key\) LIKE lower\(\$3::text\)/,
    );
    t.same(params, ["user", "cn", "a\\%%b\\_%c", "a\\%%"]);
    t.notMatch(compile("cn = *b").sql, /value_key LIKE/);
    // A prefix alone is decided by the key, a btree range (the trigram index reads all of it).
    t.match(compile("cn = a%*").sql, /AND x\.value_key LIKE lower\(\$3::text\)\)$/);
    t.notMatch(compile("cn = a%*").sql, /coalesce/);
    t.match(compile(`cn = ${"x".repeat(80)}*`).sql, /coalesce/, "a prefix no key holds whole");
  },
);

t.test("a value test said of one row; with range, only the key's bound", async (t) => {
  const test = (text: string, range: boolean) => {
    const params: unknown[] = [];
    const node = parseFilter(text).ast;
    if (node.op === "and" || node.op === "or" || node.op === "not") throw new Error(text);
    return { sql: compileValueTest(node, { alias: "k", keyLength: 200, params, range }), params };
  };
  t.same(test("sn = Meyer", true), { sql: "k.value_key = lower($1::text)", params: ["Meyer"] });
  t.same(test("sn = Me*", true), { sql: "k.value_key LIKE lower($1::text)", params: ["Me%"] });
  t.same(test("sn = *ey*", true), { sql: undefined, params: [] });
  t.same(test("sn = *", false), { sql: undefined, params: [] });
  const long = "y".repeat(80);
  t.same(test(`sn >= ${long}`, true).sql, "k.value_key >= left(lower($1::text), 200)");
  t.match(test(`sn >= ${long}`, false).sql, /AND coalesce\(k\.value_folded, k\.value_key\) >= /);
  t.throws(() =>
    compileValueTest(
      { op: "eq", attribute: "sn", value: "a" },
      {
        alias: "k; DROP",
        keyLength: 200,
        params: [],
      },
    ),
  );
});

t.test(
  "or of comparisons is one union, and of them an intersection; not an anti-join",
  async (t) => {
    t.match(
      compile("(|(uid=a)(&(sn=b)(cn=c)))").sql,
      /^e\.entry_uuid IN \(\(SELECT .*\) UNION ALL \(\(SELECT .*\) INTERSECT \(SELECT .*\)\)\)$/,
    );
    t.match(
      compile("(!(uid=a))").sql,
      /^NOT EXISTS \(SELECT 1 FROM .* AND x\.entry_uuid = e\.entry_uuid\)$/,
    );
    t.match(
      compile("(|(uid=a)(!(sn=b)))").sql,
      /^\(e\.entry_uuid IN \(.*\) OR NOT EXISTS \(.*\)\)$/,
    );
    t.match(
      compile("(&(sn=b)(cn=c))").sql,
      /^\(e\.entry_uuid IN \(\(SELECT .*\) INTERSECT \(SELECT .*\)\)\)$/,
      "an and of sets is one intersection",
    );
    t.match(
      compile("(&(sn=b)(cn=c)(!(uid=a)))").sql,
      /^\(e\.entry_uuid IN \(\(SELECT .*\) INTERSECT \(SELECT .*\)\) AND NOT EXISTS \(.*\)\)$/,
      "what is no set is tested beside the intersection",
    );
    t.notMatch(compile("(&(sn=b)(!(uid=a)))").sql, /INTERSECT/, "one set needs no intersection");
    t.equal(compile("(&)").sql, "TRUE");
    t.equal(compile("(|)").sql, "FALSE");
    t.equal(
      compile("(|(uid=a)(|))").sql,
      '(e.entry_uuid IN (SELECT x.entry_uuid FROM "projection_entries"."entry_values" AS x WHERE x.type = $1 AND x.attribute = $2::text AND x.value_key = lower($3::text)) OR FALSE)',
    );
  },
);

t.test(
  "the equalities of an or on one attribute are one scan, whatever their number",
  async (t) => {
    t.same(compile("(|(uid=a)(cn=c)(uid=B)(mail=*))"), {
      sql: `e.entry_uuid IN ((SELECT x.entry_uuid ${rows} AND x.attribute = $2::text AND x.value_key = ANY(ARRAY(SELECT lower(v) FROM unnest($3::text[]) AS v))) UNION ALL (SELECT x.entry_uuid ${rows} AND x.attribute = $4::text AND x.value_key = lower($5::text)) UNION ALL (SELECT x.entry_uuid ${rows} AND x.attribute = $6::text))`,
      params: ["user", "uid", ["a", "B"], "cn", "c", "mail"],
    });
    // A batched lookup of a hundred people's groups: one subquery and one list of values, not a
    // hundred subqueries (PostgreSQL spent longer planning those than running them).
    const members = Array.from({ length: 100 }, (_, i) => `(member=uid=p${i},ou=people)`);
    const { sql, params } = compile(`(&(objectClass=groupOfNames)(|${members.join("")}))`);
    t.equal(sql.match(/SELECT/g)?.length, 3, "one subquery for the hundred");
    t.equal(params.length, 5);
    t.equal((params[4] as string[]).length, 100);
    // A value longer than a key is compared whole, on its own.
    const long = "x".repeat(70);
    t.match(
      compile(`(|(cn=a)(cn=b)(cn=${long}))`).sql,
      /unnest\(\$3::text\[\]\).* UNION ALL \(SELECT .* AND x\.value_key = left\(lower\(\$5::text\), 200\)/s,
    );
  },
);

t.test("a statement may read the types it spans itself", async (t) => {
  const params: unknown[] = [];
  const sql = compileFilterToIndexedSql(parseFilter("uid = a").ast, {
    ...options(params),
    typeParam: { table: '"projection_entries"."entry_value_counts"', attributeParam: "$9" },
  });
  t.match(
    sql,
    'x.type = ANY(ARRAY(SELECT t.type FROM "projection_entries"."entry_value_counts" AS t WHERE t.attribute = $9::text))',
  );
  for (const typeParam of [
    { table: "counts; DROP TABLE x", attributeParam: "$1" },
    { table: '"counts"', attributeParam: "'x'" },
  ]) {
    const error = thrown(() =>
      compileFilterToIndexedSql({ op: "present", attribute: "cn" }, { ...options([]), typeParam }),
    );
    t.match(error, { code: "ANNAL_FILTER_SQL_COLUMN", status: 500 }, JSON.stringify(typeParam));
  }
});

t.test("only annal's own table, column and parameter names are accepted", async (t) => {
  for (const bad of [
    { valuesTable: "entry_values; DROP TABLE x" },
    { entryColumn: "e.entry_uuid OR TRUE" },
    { typeParam: "'user'" },
    { keyLength: 0 },
  ]) {
    const error = thrown(() =>
      compileFilterToIndexedSql({ op: "present", attribute: "cn" }, { ...options([]), ...bad }),
    );
    t.match(error, { code: "ANNAL_FILTER_SQL_COLUMN", status: 500 }, JSON.stringify(bad));
  }
});

const anyValue = fc.oneof(fc.string({ maxLength: 8 }), fc.string({ minLength: 60, maxLength: 80 }));
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
 * Every name and value replaced by as many x's: what may shape the SQL is left, with which of
 * the names are the same (an `or`'s equalities on one attribute are one scan of the index).
 */
function skeleton(node: FilterNode, names = new Map<string, string>()): FilterNode {
  const x = (text: string) => "x".repeat([...text].length);
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
      return {
        op: "substring",
        attribute: name(node.attribute),
        any: node.any.map(x),
        ...(node.initial === undefined ? {} : { initial: x(node.initial) }),
        ...(node.final === undefined ? {} : { final: x(node.final) }),
      };
    default:
      return { op: node.op, attribute: name(node.attribute), value: x(node.value) };
  }
}

t.test("compiled SQL holds no name or value, and uses every parameter it adds", async (t) => {
  fc.assert(
    fc.property(anyFilter, (ast) => {
      const params: unknown[] = ["user"];
      const sql = compileFilterToIndexedSql(ast, options(params));
      const shapeOnly = compileFilterToIndexedSql(skeleton(ast), options(["user"]));
      const used = new Set([...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
      used.delete(1); // the type's, the caller's own
      const added = params.slice(1).map((_, index) => index + 2);
      // A parameter PostgreSQL never sees in the text has no type: the query fails.
      return sql === shapeOnly && added.every((n) => used.has(n)) && used.size === added.length;
    }),
    { numRuns: 3000 },
  );
  t.pass("3000 filters");
});
