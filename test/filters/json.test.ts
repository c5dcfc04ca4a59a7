import t from "tap";
import { FilterSyntaxError, parseJsonFilter } from "../../src/filters/index.ts";
import type { FilterNode } from "../../src/filters/index.ts";
import { and, eq, not, or, present, thrown } from "./fixtures/ast.ts";

t.test("JSON filters parse to the filter tree", async (t) => {
  const cases: [string, FilterNode][] = [
    ['{"cn":"Ann"}', eq("cn", "Ann")],
    ['{"cn":"Ann","sn":"Smith"}', and(eq("cn", "Ann"), eq("sn", "Smith"))],
    ['{"mail":["a","b"]}', or(eq("mail", "a"), eq("mail", "b"))],
    ['{"mail":["a"]}', eq("mail", "a")],
    ['{"manager":null}', not(present("manager"))],
    ['{"manager":[null,"x"]}', or(not(present("manager")), eq("manager", "x"))],
    [
      '{"age":30,"active":false,"ratio":1.50,"big":1e3,"neg":-0.5}',
      and(
        eq("age", "30"),
        eq("active", "false"),
        eq("ratio", "1.50"),
        eq("big", "1e3"),
        eq("neg", "-0.5"),
      ),
    ],
    ['[{"cn":"a"},{"sn":"b"}]', or(eq("cn", "a"), eq("sn", "b"))],
    ['[{"cn":"a"}]', eq("cn", "a")],
    ['{"$and":[{"cn":"a"},{"sn":"b"}]}', and(eq("cn", "a"), eq("sn", "b"))],
    ['{"$or":[{"cn":"a"}]}', or(eq("cn", "a"))],
    ['{"$not":{"cn":"a"}}', not(eq("cn", "a"))],
    ['{"$not":[{"a":"1"},{"b":"2"}]}', not(or(eq("a", "1"), eq("b", "2")))],
    [
      '{"cn":"a","$or":[{"sn":"b"},{"sn":"c"}]}',
      and(eq("cn", "a"), or(eq("sn", "b"), eq("sn", "c"))),
    ],
    ['{"cn":"a*"}', eq("cn", "a*")],
    [' \n{ "cn" : "\\u00e9\\n\\"" }\t', eq("cn", 'é\n"')],
    ['{"cn":"\\ud800"}', eq("cn", "\ud800")],
  ];
  for (const [text, ast] of cases) t.same(parseJsonFilter(text), ast, text);
});

t.test("malformed JSON filters report the JSON position and what was expected", async (t) => {
  const filter = "a filter (a JSON object or array)";
  const cases: [string, number, string][] = [
    ['{"cn":"a"', 9, '"," or "}"'],
    ['{"cn" "a"}', 6, '":"'],
    ['{cn:"a"}', 1, 'a key (a JSON string) or "}"'],
    ['{"cn":"a",}', 10, "a key (a JSON string)"],
    ['{"cn":}', 6, "a JSON value"],
    ['{"cn":tru}', 6, "a JSON value"],
    ['{"cn":01}', 7, '"," or "}"'],
    ['{"cn":"a"} x', 11, "the end of the filter"],
    ['{"cn":"a\\x"}', 9, 'an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX'],
    ['{"cn":"a\nb"}', 8, "a character other than a control character"],
    ['[{"cn":"a"} {"sn":"b"}]', 12, '"," or "]"'],
    ["{}", 1, 'an attribute name or "$and", "$or", "$not"'],
    ["[]", 1, filter],
    ["[1]", 1, filter],
    ['"cn"', 0, filter],
    ['{"cn":{"$eq":"a"}}', 6, "a string, number, boolean or null"],
    ['{"cn":[["a"]]}', 7, "a string, number, boolean or null"],
    ['{"cn":[]}', 7, "a value"],
    ['{"$nor":[]}', 1, '"$and", "$or" or "$not"'],
    ['{"$and":{}}', 8, "an array of filters"],
    ['{"$and":[]}', 9, filter],
    ['{"$not":"x"}', 8, filter],
    ['{"cn":"a","cn":"b"}', 10, "a key not already used in this object"],
    ['{"":"a"}', 2, "an attribute name"],
  ];
  for (const [text, position, expected] of cases) {
    const error = thrown(() => parseJsonFilter(text));
    t.type(error, FilterSyntaxError, text);
    t.match(error, { position, expected, format: "json", status: 400 }, text);
  }
});
