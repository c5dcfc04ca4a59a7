import { FilterSyntaxError, type FilterFormat } from "./errors.ts";

/**
 * Character-level reading shared by the parsers. Blanks are JSON's whitespace (space, tab, CR,
 * LF) in every language, so that "the first non-blank character" means the same everywhere.
 */
export function isBlank(char: string | undefined): boolean {
  return char === " " || char === "\t" || char === "\n" || char === "\r";
}

export function skipBlanks(text: string, position: number): number {
  let at = position;
  while (isBlank(text[at])) at++;
  return at;
}

/** A JSON number (RFC 8259), kept as written: `1.50` stays `"1.50"`. */
const JSON_NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;

export function matchJsonNumber(text: string, position: number): string | undefined {
  JSON_NUMBER.lastIndex = position;
  return JSON_NUMBER.exec(text)?.[0];
}

const HEX4 = /[0-9a-fA-F]{4}/y;

/**
 * Reads the JSON string (RFC 8259) whose opening quote is at `position`. Returns its value and
 * the offset just past its closing quote. Lone surrogates written as `\uD800` are kept, as
 * `JSON.parse` keeps them.
 */
export function scanJsonString(
  text: string,
  position: number,
  format: FilterFormat,
): { value: string; end: number } {
  const fail = (at: number, expected: string, hint?: string): never => {
    throw new FilterSyntaxError({ format, text, position: at, expected, hint });
  };
  let at = position + 1;
  for (;;) {
    const char = text[at];
    if (char === undefined) return fail(at, 'a closing quote (")');
    if (char === '"') break;
    if (char === "\\") {
      const escaped = text[at + 1];
      if (escaped === "u") {
        HEX4.lastIndex = at + 2;
        if (!HEX4.test(text)) return fail(at + 2, "four hexadecimal digits after \\u");
        at += 6;
      } else if (escaped !== undefined && '"\\/bfnrt'.includes(escaped)) {
        at += 2;
      } else {
        return fail(at + 1, 'an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX');
      }
    } else if (char < " ") {
      return fail(
        at,
        "a character other than a control character",
        "JSON strings cannot hold raw control characters; write them as escapes such as \\n or \\u0001.",
      );
    } else {
      at++;
    }
  }
  // Every escape and character was checked above, so this cannot throw.
  return { value: JSON.parse(text.slice(position, at + 1)) as string, end: at + 1 };
}
