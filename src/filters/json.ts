import type { FilterNode } from "./ast.ts";
import { allOf, anyOf } from "./build.ts";
import { FilterSyntaxError } from "./errors.ts";
import { checkFilterDepth, checkFilterLength, checkNesting } from "./limits.ts";
import { matchJsonNumber, scanJsonString, skipBlanks } from "./scan.ts";

/**
 * The JSON filter language: an object of attribute to value.
 *
 * - `{"sn": "Smith", "givenName": "Ann"}`: every pair must hold (AND).
 * - `{"mail": ["a@x", "b@x"]}`: an array value means any of them (OR).
 * - `{"manager": null}`: `null` means the attribute is absent.
 * - Numbers and booleans compare as the text written: `1.50` is `"1.50"`, `true` is `"true"`.
 * - `{"$and": [f, ...]}`, `{"$or": [f, ...]}`, `{"$not": f}` combine filters explicitly, and a
 *   top-level array `[f, ...]` is the OR of its filters; `f` is an object or an array.
 *
 * Values match with `*` taken literally (no wildcards). A key may appear once in an object; two
 * conditions on one attribute go in `$and`.
 */
export function parseJsonFilter(text: string): FilterNode {
  checkFilterLength(text);
  const value = readJson(text);
  return checkFilterDepth(filterOf(text, value));
}

type JsonValue =
  | { kind: "object"; at: number; close: number; entries: JsonEntry[] }
  | { kind: "array"; at: number; close: number; items: JsonValue[] }
  | { kind: "string"; at: number; value: string }
  | { kind: "number"; at: number; value: string }
  | { kind: "boolean"; at: number; value: boolean }
  | { kind: "null"; at: number };

type JsonEntry = { key: string; keyAt: number; value: JsonValue };

function syntaxError(text: string, position: number, expected: string, hint?: string): never {
  throw new FilterSyntaxError({ format: "json", text, position, expected, hint });
}

/** RFC 8259 JSON, keeping the position of every value and key for error messages. */
function readJson(text: string): JsonValue {
  let at = skipBlanks(text, 0);

  const readValue = (brackets: number): JsonValue => {
    const start = at;
    const char = text[at];
    if (char === "{" || char === "[") {
      checkNesting(brackets + 1);
      return char === "{" ? readObject(brackets + 1) : readArray(brackets + 1);
    }
    if (char === '"') {
      const { value, end } = scanJsonString(text, at, "json");
      at = end;
      return { kind: "string", at: start, value };
    }
    for (const [word, literal] of [
      ["true", { kind: "boolean", at: start, value: true }],
      ["false", { kind: "boolean", at: start, value: false }],
      ["null", { kind: "null", at: start }],
    ] as const) {
      if (text.startsWith(word, at)) {
        at += word.length;
        return literal;
      }
    }
    const number = matchJsonNumber(text, at);
    if (number === undefined) return syntaxError(text, at, "a JSON value");
    at += number.length;
    return { kind: "number", at: start, value: number };
  };

  const readObject = (brackets: number): JsonValue => {
    const start = at;
    const entries: JsonEntry[] = [];
    at = skipBlanks(text, at + 1);
    if (text[at] !== "}") {
      for (;;) {
        if (text[at] !== '"') {
          return syntaxError(
            text,
            at,
            entries.length === 0 ? 'a key (a JSON string) or "}"' : "a key (a JSON string)",
          );
        }
        const keyAt = at;
        const { value: key, end } = scanJsonString(text, at, "json");
        at = skipBlanks(text, end);
        if (text[at] !== ":") return syntaxError(text, at, '":"');
        at = skipBlanks(text, at + 1);
        const value = readValue(brackets);
        entries.push({ key, keyAt, value });
        at = skipBlanks(text, at);
        if (text[at] === "}") break;
        if (text[at] !== ",") return syntaxError(text, at, '"," or "}"');
        at = skipBlanks(text, at + 1);
      }
    }
    const close = at;
    at++;
    return { kind: "object", at: start, close, entries };
  };

  const readArray = (brackets: number): JsonValue => {
    const start = at;
    const items: JsonValue[] = [];
    at = skipBlanks(text, at + 1);
    if (text[at] !== "]") {
      for (;;) {
        items.push(readValue(brackets));
        at = skipBlanks(text, at);
        if (text[at] === "]") break;
        if (text[at] !== ",") return syntaxError(text, at, '"," or "]"');
        at = skipBlanks(text, at + 1);
      }
    }
    const close = at;
    at++;
    return { kind: "array", at: start, close, items };
  };

  const value = readValue(0);
  at = skipBlanks(text, at);
  if (at < text.length) syntaxError(text, at, "the end of the filter");
  return value;
}

const A_FILTER = "a filter (a JSON object or array)";

/** An object (pairs ANDed) or an array (filters ORed). */
function filterOf(text: string, value: JsonValue): FilterNode {
  if (value.kind === "array") {
    if (value.items.length === 0) return syntaxError(text, value.close, A_FILTER);
    return anyOf(value.items.map((item) => filterOf(text, item)));
  }
  if (value.kind !== "object") return syntaxError(text, value.at, A_FILTER);
  if (value.entries.length === 0) {
    return syntaxError(text, value.close, 'an attribute name or "$and", "$or", "$not"');
  }
  const seen = new Set<string>();
  const conditions = value.entries.map((entry) => {
    if (seen.has(entry.key)) {
      syntaxError(
        text,
        entry.keyAt,
        "a key not already used in this object",
        `${JSON.stringify(entry.key)} appears twice in one object; put two conditions on one attribute in "$and": {"$and": [{...}, {...}]}.`,
      );
    }
    seen.add(entry.key);
    return conditionOf(text, entry);
  });
  return allOf(conditions);
}

function conditionOf(text: string, { key, keyAt, value }: JsonEntry): FilterNode {
  switch (key) {
    case "$and":
    case "$or": {
      if (value.kind !== "array") return syntaxError(text, value.at, "an array of filters");
      if (value.items.length === 0) return syntaxError(text, value.close, A_FILTER);
      const filters = value.items.map((item) => filterOf(text, item));
      return { op: key === "$and" ? "and" : "or", filters };
    }
    case "$not":
      return { op: "not", filter: filterOf(text, value) };
  }
  if (key.startsWith("$")) return syntaxError(text, keyAt, '"$and", "$or" or "$not"');
  if (key === "") return syntaxError(text, keyAt + 1, "an attribute name");
  if (value.kind === "array") {
    if (value.items.length === 0) return syntaxError(text, value.close, "a value");
    return anyOf(value.items.map((item) => valueCondition(text, key, item)));
  }
  return valueCondition(text, key, value);
}

function valueCondition(text: string, attribute: string, value: JsonValue): FilterNode {
  switch (value.kind) {
    case "string":
    case "number":
      return { op: "eq", attribute, value: value.value };
    case "boolean":
      return { op: "eq", attribute, value: String(value.value) };
    case "null":
      return { op: "not", filter: { op: "present", attribute } };
    default:
      return syntaxError(text, value.at, "a string, number, boolean or null");
  }
}
