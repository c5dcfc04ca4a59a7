import type { FilterNode } from "./ast.ts";
import { allOf, anyOf, wildcardNode } from "./build.ts";
import { FilterSyntaxError, FilterUnsupportedError } from "./errors.ts";
import { checkFilterDepth, checkFilterLength, checkNesting } from "./limits.ts";
import { matchJsonNumber, scanJsonString, skipBlanks } from "./scan.ts";

/**
 * SCIM filters (RFC 7644 section 3.4.2.2): `userName eq "bjensen" and not (title pr)`.
 *
 * - Operators `eq ne co sw ew pr gt ge lt le`, `and`, `or`, `not (...)`, parentheses; all
 *   keywords in any letter case. `not` binds tightest, then `and`, then `or`.
 * - `ne` is `not eq`; `co`, `sw`, `ew` are substring matches; `pr` is presence. `eq null` means
 *   absent and `ne null` present; `null` works with no other operator.
 * - Values: JSON strings, JSON numbers (compared as written: `1.50` is `"1.50"`), `true`, `false`.
 * - Attribute paths: `title`, `name.familyName`; a schema URN prefix is accepted and dropped
 *   (`urn:ietf:params:scim:schemas:core:2.0:User:userName` is `userName`), because annal's
 *   attributes live in one namespace. Value paths (`emails[type eq "work"]`) are refused with
 *   `ANNAL_FILTER_UNSUPPORTED`.
 */
export function parseScimFilter(text: string): FilterNode {
  checkFilterLength(text);
  return checkFilterDepth(new ScimReader(text).readAll());
}

type Token =
  | { kind: "(" | ")" | "[" | "]" | "end" | "other"; at: number; end: number }
  | { kind: "word"; at: number; end: number; word: string }
  | { kind: "string" | "number"; at: number; end: number; value: string };

const WORD = /[A-Za-z_$][A-Za-z0-9_$.:-]*/y;
const COMPARISONS = new Set(["eq", "ne", "co", "sw", "ew", "gt", "ge", "lt", "le"]);
const EXPECTED_OPERATOR = "an operator (eq, ne, co, sw, ew, pr, gt, ge, lt, le)";
const EXPECTED_VALUE = "a value (a JSON string, a number, true, false or null)";

class ScimReader {
  readonly #text: string;
  #at = 0;

  constructor(text: string) {
    this.#text = text;
  }

  readAll(): FilterNode {
    const node = this.#or(0);
    const next = this.#peek();
    if (next.kind !== "end") this.#fail(next.at, '"and", "or" or the end of the filter');
    return node;
  }

  #fail(position: number, expected: string, hint?: string): never {
    throw new FilterSyntaxError({ format: "scim", text: this.#text, position, expected, hint });
  }

  /** The next token, without consuming it. */
  #peek(): Token {
    const text = this.#text;
    const at = skipBlanks(text, this.#at);
    const char = text[at];
    if (char === undefined) return { kind: "end", at, end: at };
    if (char === "(" || char === ")" || char === "[" || char === "]") {
      return { kind: char, at, end: at + 1 };
    }
    if (char === '"') {
      const { value, end } = scanJsonString(text, at, "scim");
      return { kind: "string", at, end, value };
    }
    const number = matchJsonNumber(text, at);
    if (number !== undefined) return { kind: "number", at, end: at + number.length, value: number };
    WORD.lastIndex = at;
    const word = WORD.exec(text)?.[0];
    if (word !== undefined) return { kind: "word", at, end: at + word.length, word };
    return { kind: "other", at, end: at + 1 };
  }

  #take(token: Token): Token {
    this.#at = token.end;
    return token;
  }

  #isKeyword(token: Token, keyword: string): boolean {
    return token.kind === "word" && token.word.toLowerCase() === keyword;
  }

  #or(level: number): FilterNode {
    const filters = [this.#and(level)];
    while (this.#isKeyword(this.#peek(), "or")) {
      this.#take(this.#peek());
      filters.push(this.#and(level));
    }
    return anyOf(filters);
  }

  #and(level: number): FilterNode {
    const filters = [this.#unary(level)];
    while (this.#isKeyword(this.#peek(), "and")) {
      this.#take(this.#peek());
      filters.push(this.#unary(level));
    }
    return allOf(filters);
  }

  #unary(level: number): FilterNode {
    const token = this.#peek();
    if (this.#isKeyword(token, "not")) {
      const rest = this.#at;
      this.#take(token);
      // `not (...)`; otherwise "not" is an attribute name (`not pr`).
      if (this.#peek().kind === "(") {
        checkNesting(level + 1);
        return { op: "not", filter: this.#group(level + 1) };
      }
      this.#at = rest;
    }
    if (token.kind === "(") {
      checkNesting(level + 1);
      return this.#group(level + 1);
    }
    return this.#comparison();
  }

  /** `( filter )` */
  #group(level: number): FilterNode {
    this.#take(this.#peek());
    const node = this.#or(level);
    const close = this.#peek();
    if (close.kind !== ")") this.#fail(close.at, '"and", "or" or ")"');
    this.#take(close);
    return node;
  }

  #comparison(): FilterNode {
    const path = this.#peek();
    if (path.kind !== "word") return this.#fail(path.at, "an attribute name");
    this.#take(path);
    const attribute = path.word.slice(path.word.lastIndexOf(":") + 1);
    if (attribute === "") return this.#fail(path.end, "an attribute name after the schema URN");
    const operator = this.#peek();
    if (operator.kind === "[") {
      throw new FilterUnsupportedError({
        format: "scim",
        position: operator.at,
        feature: "a SCIM value path (attribute[filter])",
        hint: 'Compare the attribute directly, e.g. emails co "@example.com".',
      });
    }
    const op = operator.kind === "word" ? operator.word.toLowerCase() : "";
    if (op === "pr") {
      this.#take(operator);
      return { op: "present", attribute };
    }
    if (!COMPARISONS.has(op)) return this.#fail(operator.at, EXPECTED_OPERATOR);
    this.#take(operator);
    const token = this.#peek();
    const literal = token.kind === "word" ? token.word.toLowerCase() : "";
    let value: string;
    if (token.kind === "string" || token.kind === "number") {
      value = token.value;
    } else if (literal === "true" || literal === "false") {
      value = literal;
    } else if (literal === "null" && (op === "eq" || op === "ne")) {
      this.#take(token);
      const present: FilterNode = { op: "present", attribute };
      return op === "eq" ? { op: "not", filter: present } : present;
    } else if (literal === "null") {
      return this.#fail(token.at, "a JSON string or number", "null works only with eq and ne.");
    } else {
      return this.#fail(token.at, EXPECTED_VALUE);
    }
    this.#take(token);
    switch (op) {
      case "eq":
        return { op: "eq", attribute, value };
      case "ne":
        return { op: "not", filter: { op: "eq", attribute, value } };
      case "co":
        return wildcardNode(attribute, ["", value, ""]);
      case "sw":
        return wildcardNode(attribute, [value, ""]);
      case "ew":
        return wildcardNode(attribute, ["", value]);
      default:
        return { op: op as "gt" | "ge" | "lt" | "le", attribute, value };
    }
  }
}
