import type { FilterNode } from "./ast.ts";
import { allOf, anyOf, wildcardNode } from "./build.ts";
import { FilterSyntaxError } from "./errors.ts";
import { checkFilterDepth, checkFilterLength, checkNesting } from "./limits.ts";
import { isBlank, skipBlanks } from "./scan.ts";

/**
 * The default expression language: `sn = Smith AND (givenName = "Ann*" OR NOT mail = *)`.
 *
 * - Comparisons `<attr> <op> <value>` with `=`, `!=` (NOT of `=`), `>=`, `<=`, `>`, `<`, `~=`.
 * - Values are bare words (anything up to a blank, `(`, `)` or `"`, not starting with one of
 *   `= ! < > ~`; a backslash is literal) or double-quoted strings in which `\"`, `\\` and
 *   `\*` stand for `"`, `\` and a literal `*`; no other escapes.
 * - An unescaped `*` in a value is a wildcard: `cn = Ann*` is a substring match, `mail = *`
 *   means mail is present, `mail != *` that it is absent. Wildcards work with `=` and `!=` only.
 * - `AND`, `OR`, `NOT` in any letter case; NOT binds tightest, then AND, then OR; parentheses
 *   group. `a = 1 OR b = 2 AND c = 3` is `a = 1 OR (b = 2 AND c = 3)`.
 * - Attribute names: letters, digits and `_ - . ; :` (so OIDs and options pass through).
 */
export function parseExpressionFilter(text: string): FilterNode {
  checkFilterLength(text);
  return checkFilterDepth(new ExpressionReader(text).readAll());
}

const ATTRIBUTE = /[A-Za-z0-9_][A-Za-z0-9_.;:-]*/y;
const NAME_CHAR = /[A-Za-z0-9_.;:-]/;
const OPERATOR = /!=|>=|<=|~=|=|>|</y;
const EXPECTED_OPERATOR = "an operator (=, !=, <, <=, >, >=, ~=)";
const QUOTE_HINT = 'Quote a value that contains blanks: cn = "Ann Smith".';

type Value = { pieces: string[]; wildcardAt: number | undefined };

class ExpressionReader {
  readonly #text: string;
  #at = 0;
  /** Where the last bare (unquoted) value ended, to suggest quotes when a blank cut it short. */
  #bareValueEnd = -1;

  constructor(text: string) {
    this.#text = text;
  }

  readAll(): FilterNode {
    const node = this.#or(0);
    this.#at = skipBlanks(this.#text, this.#at);
    if (this.#at < this.#text.length) {
      this.#fail(this.#at, '"AND", "OR" or the end of the filter', this.#quoteHint());
    }
    return node;
  }

  #fail(position: number, expected: string, hint?: string): never {
    throw new FilterSyntaxError({
      format: "expression",
      text: this.#text,
      position,
      expected,
      hint,
    });
  }

  #quoteHint(): string | undefined {
    const end = this.#bareValueEnd;
    const next = this.#text[this.#at];
    const cutShort =
      end >= 0 && end < this.#at && skipBlanks(this.#text, end) === this.#at && next !== "(";
    return cutShort ? QUOTE_HINT : undefined;
  }

  /** Consumes `word` (any letter case) when it stands next, as a whole word. */
  #keyword(word: string): boolean {
    const at = skipBlanks(this.#text, this.#at);
    const candidate = this.#text.slice(at, at + word.length);
    if (candidate.toLowerCase() !== word) return false;
    const after = this.#text[at + word.length];
    if (after !== undefined && NAME_CHAR.test(after)) return false;
    this.#at = at + word.length;
    return true;
  }

  #or(level: number): FilterNode {
    const filters = [this.#and(level)];
    while (this.#keyword("or")) filters.push(this.#and(level));
    return anyOf(filters);
  }

  #and(level: number): FilterNode {
    const filters = [this.#unary(level)];
    while (this.#keyword("and")) filters.push(this.#unary(level));
    return allOf(filters);
  }

  #unary(level: number): FilterNode {
    const before = this.#at;
    if (this.#keyword("not")) {
      // `not = x` compares an attribute called "not".
      OPERATOR.lastIndex = skipBlanks(this.#text, this.#at);
      if (!OPERATOR.test(this.#text)) {
        checkNesting(level + 1);
        return { op: "not", filter: this.#unary(level + 1) };
      }
      this.#at = before;
    }
    return this.#primary(level);
  }

  #primary(level: number): FilterNode {
    this.#at = skipBlanks(this.#text, this.#at);
    if (this.#text[this.#at] !== "(") return this.#comparison();
    checkNesting(level + 1);
    this.#at++;
    const node = this.#or(level + 1);
    this.#at = skipBlanks(this.#text, this.#at);
    if (this.#text[this.#at] !== ")") this.#fail(this.#at, '"AND", "OR" or ")"', this.#quoteHint());
    this.#at++;
    return node;
  }

  #comparison(): FilterNode {
    const text = this.#text;
    ATTRIBUTE.lastIndex = this.#at;
    const attribute = ATTRIBUTE.exec(text)?.[0];
    if (attribute === undefined) return this.#fail(this.#at, "an attribute name");
    this.#at = skipBlanks(text, this.#at + attribute.length);
    OPERATOR.lastIndex = this.#at;
    const operator = OPERATOR.exec(text)?.[0];
    if (operator === undefined) return this.#fail(this.#at, EXPECTED_OPERATOR);
    this.#at = skipBlanks(text, this.#at + operator.length);
    const { pieces, wildcardAt } = text[this.#at] === '"' ? this.#quoted() : this.#bare();
    const value = pieces[0] ?? "";
    switch (operator) {
      case "=":
        return wildcardAt === undefined
          ? { op: "eq", attribute, value }
          : wildcardNode(attribute, pieces);
      case "!=":
        return {
          op: "not",
          filter:
            wildcardAt === undefined
              ? { op: "eq", attribute, value }
              : wildcardNode(attribute, pieces),
        };
    }
    if (wildcardAt !== undefined) {
      this.#fail(
        wildcardAt,
        "a value without wildcards",
        "The * wildcard works with = and != only; for a literal star quote the value and write \\*.",
      );
    }
    const op = ({ ">=": "ge", "<=": "le", ">": "gt", "<": "lt", "~=": "approx" } as const)[
      operator as ">=" | "<=" | ">" | "<" | "~="
    ];
    return { op, attribute, value };
  }

  #bare(): Value {
    const text = this.#text;
    const start = this.#at;
    const pieces: string[] = [];
    let wildcardAt: number | undefined;
    let pieceStart = start;
    for (;;) {
      const char = text[this.#at];
      if (char === undefined || isBlank(char) || char === "(" || char === ")" || char === '"') {
        break;
      }
      if (char === "*") {
        wildcardAt ??= this.#at;
        pieces.push(text.slice(pieceStart, this.#at));
        pieceStart = this.#at + 1;
      }
      this.#at++;
    }
    if (this.#at === start) this.#fail(start, "a value");
    if ("=!<>~".includes(text[start] ?? "")) {
      // `a == 1` is a typo far more often than a search for "=".
      this.#fail(start, "a value", 'Quote a value that starts with =, !, <, > or ~: a = "=1".');
    }
    pieces.push(text.slice(pieceStart, this.#at));
    this.#bareValueEnd = this.#at;
    return { pieces, wildcardAt };
  }

  #quoted(): Value {
    const text = this.#text;
    const pieces: string[] = [];
    let wildcardAt: number | undefined;
    let piece = "";
    this.#at++;
    for (;;) {
      const char = text[this.#at];
      if (char === undefined) return this.#fail(this.#at, 'a closing quote (")');
      if (char === '"') break;
      if (char === "\\") {
        const escaped = text[this.#at + 1];
        if (escaped !== '"' && escaped !== "\\" && escaped !== "*") {
          this.#fail(
            this.#at + 1,
            'an escape: \\" \\\\ or \\*',
            'Inside quotes, write \\" for a quote, \\\\ for a backslash and \\* for a literal star.',
          );
        }
        piece += escaped;
        this.#at += 2;
      } else if (char === "*") {
        wildcardAt ??= this.#at;
        pieces.push(piece);
        piece = "";
        this.#at++;
      } else {
        piece += char;
        this.#at++;
      }
    }
    this.#at++;
    pieces.push(piece);
    this.#bareValueEnd = -1;
    return { pieces, wildcardAt };
  }
}
