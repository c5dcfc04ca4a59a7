import type { ComparisonOp, FilterNode } from "./ast.ts";
import { wildcardNode } from "./build.ts";
import { FilterSyntaxError, FilterUnsupportedError } from "./errors.ts";
import { checkFilterDepth, checkFilterLength, checkNesting } from "./limits.ts";
import { skipBlanks } from "./scan.ts";

/**
 * LDAP search filters as RFC 4515 writes them: `(&(objectClass=person)(|(sn=Sm*)(cn=*ann*)))`.
 *
 * - `=`, `~=`, `>=`, `<=`; `(attr=*)` is presence; `*` elsewhere in an `=` value makes a
 *   substring match (`(cn=a*b*c)`); `\XX` writes any byte (`\2a` is a literal `*`, `\28` and
 *   `\29` parentheses, `\5c` a backslash); escaped bytes must form UTF-8 text.
 * - Attribute descriptions: a name (letters, digits, `-`, and `_`, which some servers allow)
 *   or a numeric OID, with `;options`: `cn;lang-de`, `2.5.4.3`. The name is kept as written.
 * - `(&)` is absolute true and `(|)` absolute false (RFC 4526).
 * - Blanks may stand around the whole filter and between the filters of `&`, `|` and `!`; none
 *   inside an item, where they are part of the value: `(cn= a)` asks for `" a"`.
 * - Extensible match (`(cn:dn:=x)`, `:=`) is refused with `ANNAL_FILTER_UNSUPPORTED`.
 */
export function parseLdapFilter(text: string): FilterNode {
  checkFilterLength(text);
  const reader = new LdapReader(text);
  return checkFilterDepth(reader.readAll());
}

/**
 * Whether the text at `position` opens an LDAP filter: `(` directly followed by `&`, `|`, `!`,
 * `:`, or an attribute description and `=`, `~=`, `>=`, `<=` or `:`. Every LDAP filter does; a
 * default expression or SCIM filter in parentheses (`(sn = x)`, `(age>5)`, `(title pr)`) does not.
 */
export function startsLikeLdap(text: string, position: number): boolean {
  LDAP_START.lastIndex = position;
  return LDAP_START.test(text);
}

const ATTRIBUTE_DESCRIPTION =
  /(?:[A-Za-z][A-Za-z0-9_-]*|(?:0|[1-9][0-9]*)(?:\.(?:0|[1-9][0-9]*))+)(?:;[A-Za-z0-9-]+)*/y;
const LDAP_START = new RegExp(`\\((?:[&|!:]|${ATTRIBUTE_DESCRIPTION.source}(?:=|~=|>=|<=|:))`, "y");
const HEX_PAIR = /[0-9a-fA-F]{2}/y;
const OPERATORS: Readonly<Record<string, ComparisonOp>> = { "~": "approx", ">": "ge", "<": "le" };
const utf8 = new TextDecoder("utf-8", { fatal: true });

class LdapReader {
  readonly #text: string;
  #at = 0;

  constructor(text: string) {
    this.#text = text;
  }

  readAll(): FilterNode {
    this.#at = skipBlanks(this.#text, 0);
    const node = this.#filter(0);
    this.#at = skipBlanks(this.#text, this.#at);
    if (this.#at < this.#text.length) {
      this.#fail(
        this.#at,
        "the end of the filter",
        "An LDAP filter is one parenthesised filter: combine several as (&(...)(...)) or (|(...)(...)).",
      );
    }
    return node;
  }

  #fail(position: number, expected: string, hint?: string): never {
    throw new FilterSyntaxError({ format: "ldap", text: this.#text, position, expected, hint });
  }

  #expect(char: string, expected = JSON.stringify(char)): void {
    if (this.#text[this.#at] !== char) this.#fail(this.#at, expected);
    this.#at++;
  }

  /** `( filtercomp )`; `level` counts the parentheses around it. */
  #filter(level: number): FilterNode {
    checkNesting(level + 1);
    this.#expect("(");
    const kind = this.#text[this.#at];
    if (kind === "&" || kind === "|") {
      this.#at = skipBlanks(this.#text, this.#at + 1);
      const filters: FilterNode[] = [];
      while (this.#text[this.#at] === "(") {
        filters.push(this.#filter(level + 1));
        this.#at = skipBlanks(this.#text, this.#at);
      }
      this.#expect(")", '"(" or ")"');
      return { op: kind === "&" ? "and" : "or", filters };
    }
    if (kind === "!") {
      this.#at = skipBlanks(this.#text, this.#at + 1);
      const filter = this.#filter(level + 1);
      this.#at = skipBlanks(this.#text, this.#at);
      this.#expect(")");
      return { op: "not", filter };
    }
    const item = this.#item();
    if (this.#text[this.#at] === "(") {
      this.#fail(this.#at, '")"', "In LDAP filter values write \\28 for ( and \\29 for ).");
    }
    this.#expect(")");
    return item;
  }

  #item(): FilterNode {
    const text = this.#text;
    const start = this.#at;
    ATTRIBUTE_DESCRIPTION.lastIndex = start;
    const attribute = ATTRIBUTE_DESCRIPTION.exec(text)?.[0] ?? "";
    this.#at += attribute.length;
    if (text[this.#at] === ":") {
      throw new FilterUnsupportedError({
        format: "ldap",
        position: this.#at,
        feature: 'LDAP extensible match (":=")',
        hint: "Write the condition with =, ~=, >= or <= on the attribute itself, e.g. (cn=value).",
      });
    }
    if (attribute === "") this.#fail(start, 'an attribute name or "&", "|", "!"');
    const op = this.#operator();
    const pieces = this.#assertionValue(op === "eq");
    if (pieces.length === 1) return { op, attribute, value: pieces[0] ?? "" };
    return wildcardNode(attribute, pieces);
  }

  /** `=`, `~=`, `>=` or `<=`. */
  #operator(): ComparisonOp {
    const at = this.#at;
    const char = this.#text[at] ?? "";
    if (char === "=") {
      this.#at++;
      return "eq";
    }
    const op = Object.hasOwn(OPERATORS, char) ? OPERATORS[char] : undefined;
    if (op === undefined) return this.#fail(at, '"=", "~=", ">=" or "<="');
    if (this.#text[at + 1] !== "=") this.#fail(at + 1, '"="');
    this.#at += 2;
    return op;
  }

  /** The value up to `)`, split at unescaped `*` when wildcards are allowed. */
  #assertionValue(wildcards: boolean): string[] {
    const text = this.#text;
    const pieces: string[] = [];
    let piece = "";
    let bytes: number[] = [];
    let bytesAt = 0;
    const flushBytes = (): void => {
      if (bytes.length === 0) return;
      try {
        piece += utf8.decode(new Uint8Array(bytes));
      } catch {
        throw new FilterUnsupportedError({
          format: "ldap",
          position: bytesAt,
          feature: "an assertion value whose \\XX escapes are not UTF-8 text",
          hint: "annal matches text values; escape non-ASCII characters as their UTF-8 bytes (é is \\c3\\a9), or write them as they are.",
        });
      }
      bytes = [];
    };
    for (;;) {
      const char = text[this.#at];
      if (char === ")" || char === undefined || char === "(" || char === "\0") {
        flushBytes();
        pieces.push(piece);
        return pieces;
      }
      if (char === "*") {
        if (!wildcards) {
          this.#fail(
            this.#at,
            '")"',
            "* is a wildcard only with =; write \\2a for a literal star.",
          );
        }
        flushBytes();
        pieces.push(piece);
        piece = "";
        this.#at++;
      } else if (char === "\\") {
        HEX_PAIR.lastIndex = this.#at + 1;
        if (!HEX_PAIR.test(text)) {
          this.#fail(
            this.#at + 1,
            "two hexadecimal digits after \\",
            "In LDAP filters a backslash starts an escape such as \\2a (*), \\28 ((), \\29 ()) or \\5c (\\).",
          );
        }
        if (bytes.length === 0) bytesAt = this.#at;
        bytes.push(Number.parseInt(text.slice(this.#at + 1, this.#at + 3), 16));
        this.#at += 3;
      } else {
        flushBytes();
        const codePoint = text.codePointAt(this.#at) ?? 0;
        const unit = String.fromCodePoint(codePoint);
        piece += unit;
        this.#at += unit.length;
      }
    }
  }
}
