import { buildSchema, GraphQLError, type ValidationContext, type ValidationRule } from "graphql";
import t from "tap";
import type { GraphqlConfig } from "../../src/config/index.ts";
import { GRAPHQL_CODES } from "../../src/graphql/errors.ts";
import { DocumentCache } from "../../src/graphql/document-cache.ts";
import { parseLimited, validationRules } from "../../src/graphql/limits.ts";

const schema = buildSchema(`type Query { a: Int, b(n: Int): Int }`);
const limits: GraphqlConfig["limits"] = {
  maxTokens: 1000,
  maxDepth: 5,
  maxAliases: 2,
  maxDirectives: 5,
  maxCost: 1000,
  maxEntries: 1000,
};

/** A parser that counts its calls. */
function counting() {
  const parse = parseLimited(1000);
  let calls = 0;
  return {
    parse: (source: string) => {
      calls++;
      return parse(source);
    },
    calls: () => calls,
  };
}

/** A rule that refuses `b` when the request's variable `n` is over 10, counting its runs. */
function perRequest(variables: Record<string, unknown>) {
  let runs = 0;
  const rule: ValidationRule = (context: ValidationContext) => {
    runs++;
    return {
      Field(node) {
        if (node.name.value === "b" && (variables.n as number) > 10) {
          context.reportError(
            new GraphQLError("too big", { extensions: { code: GRAPHQL_CODES.costLimit } }),
          );
        }
      },
    };
  };
  return { rule, runs: () => runs };
}

t.test("a text is parsed once and its document checked by the fixed rules once", async (t) => {
  const parser = counting();
  const documents = new DocumentCache(parser.parse, validationRules(limits, false));
  const source = "query($n: Int) { a b(n: $n) }";
  const first = documents.parse(source);
  t.equal(documents.parse(source), first, "the same document");
  t.equal(parser.calls(), 1);

  const small = perRequest({ n: 1 });
  t.same(documents.validate(schema, first, [small.rule]), []);
  t.same(documents.validate(schema, first, [small.rule]), []);
  t.equal(small.runs(), 2, "the rule that reads variables runs on every request");

  const big = perRequest({ n: 11 });
  const errors = documents.validate(schema, first, [big.rule]);
  t.same(
    errors.map((error) => error.extensions.code),
    [GRAPHQL_CODES.costLimit],
    "another request's variables are judged by their own values",
  );
});

t.test("a document that fails a rule is refused on every request, with every error", async (t) => {
  const documents = new DocumentCache(parseLimited(1000), validationRules(limits, false));
  const source = "{ a nope x: a y: a z: a }";
  for (let i = 0; i < 2; i++) {
    const errors = documents.validate(schema, documents.parse(source), []);
    t.same(
      errors.map((error) => error.extensions.code),
      [GRAPHQL_CODES.aliasLimit, GRAPHQL_CODES.validationFailed],
      `request ${i + 1}`,
    );
  }
  t.same(
    documents
      .validate(buildSchema("type Query { b: Int }"), documents.parse("{ a }"), [])
      .map((error) => error.message),
    ['Cannot query field "a" on type "Query". Did you mean "b"?'],
    "a document valid for one schema is checked again for another",
  );
});

t.test("a syntax error is thrown every time and not kept", async (t) => {
  const parser = counting();
  const documents = new DocumentCache(parser.parse, []);
  for (let i = 0; i < 2; i++) {
    t.throws(() => documents.parse("{ a"), { name: "GraphQLError", message: /Expected Name/ });
  }
  t.equal(parser.calls(), 2);
  t.equal(documents.size, 0);
});

t.test("the least recently used texts go once the budget of characters is spent", async (t) => {
  const parser = counting();
  const documents = new DocumentCache(parser.parse, [], 20);
  const one = "{ a }"; // 5 characters each
  const two = "{ b }";
  const three = "{ a b }";
  documents.parse(one);
  documents.parse(two);
  documents.parse(one); // now the most recently used
  documents.parse(three);
  documents.parse("{ b a }"); // 5 + 5 + 7 + 7 > 20: two goes first
  t.equal(documents.size, 3);
  const calls = parser.calls();
  documents.parse(one);
  t.equal(parser.calls(), calls, "one is still held");
  documents.parse(two);
  t.equal(parser.calls(), calls + 1, "two was parsed again");
  t.ok(documents.size <= 3);
});
