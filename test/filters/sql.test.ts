import t from "tap";
import { compileFilterToSql, parseFilter } from "../../src/filters/index.ts";
import { likePattern } from "../../src/filters/sql.ts";
import { thrown } from "./fixtures/ast.ts";

const compile = (text: string, params: unknown[] = []) => {
  const sql = compileFilterToSql(parseFilter(text).ast, {
    attributesColumn: "e.attributes",
    params,
  });
  return { sql, params };
};

t.test("equality compares any value, ignoring case, through parameters", async (t) => {
  t.same(compile("sn = Smith"), {
    sql: "EXISTS (SELECT 1 FROM jsonb_array_elements_text(e.attributes -> $1::text) AS v(value) WHERE lower(v.value) = lower($2::text))",
    params: ["sn", "Smith"],
  });
});

t.test("numbering continues after the parameters already in the query", async (t) => {
  const { sql, params } = compile("sn = Smith", ["person", 10]);
  t.match(sql, /-> \$3::text\).*lower\(\$4::text\)/);
  t.same(params, ["person", 10, "sn", "Smith"]);
});

t.test("every operator compiles to its documented form", async (t) => {
  t.same(compile("mail = *"), { sql: "(e.attributes ? $1::text)", params: ["mail"] });
  t.match(compile("cn ~= ann").sql, /lower\(v\.value\) = lower\(\$2::text\)/);
  t.match(compile("n >= 5").sql, /lower\(v\.value\) >= lower\(\$2::text\) COLLATE "C"/);
  t.match(compile("n > 5").sql, /lower\(v\.value\) > lower/);
  t.match(compile("n <= 5").sql, /lower\(v\.value\) <= lower/);
  t.match(compile("n < 5").sql, /lower\(v\.value\) < lower/);
  t.same(compile("cn = a%*b_*c\\").params, ["cn", "a\\%%b\\_%c\\\\"]);
  t.match(compile("cn = a*").sql, /WHERE v\.value ILIKE \$2::text\)$/);
  t.same(compile("(&)").sql, "TRUE");
  t.same(compile("(|)").sql, "FALSE");
  t.match(
    compile("NOT (a = 1 AND b = 2 OR c = 3)").sql,
    /^NOT \(\(\(EXISTS .* AND EXISTS .*\) OR EXISTS .*\)\)$/,
  );
});

t.test("like patterns escape %, _ and backslash in every piece", async (t) => {
  t.equal(likePattern({ initial: "a%", any: ["_", "\\"], final: "z" }), "a\\%%\\_%\\\\%z");
  t.equal(likePattern({ any: ["x"] }), "%x%");
  t.equal(likePattern({ initial: "x", any: [] }), "x%");
  t.equal(likePattern({ any: [], final: "x" }), "%x");
});

t.test("the attributes column must be a plain identifier", async (t) => {
  for (const column of ["attributes; DROP TABLE x", "Attributes", '"a"', "a b", "1a", ""]) {
    const error = thrown(() =>
      compileFilterToSql(
        { op: "present", attribute: "cn" },
        { attributesColumn: column, params: [] },
      ),
    );
    t.match(error, { code: "ANNAL_FILTER_SQL_COLUMN", status: 500 }, column);
  }
});
