/**
 * Text values the log cannot hold as they are, stored losslessly.
 *
 * PostgreSQL's jsonb refuses U+0000 in a string, and slapd accepts it in a directory string.
 * Such a value is stored as U+FFFF, `b64:`, and the base64 of its UTF-8 bytes; so is every
 * value that itself begins with U+FFFF (a noncharacter no directory value is expected to start
 * with), which makes the encoding unambiguous: a stored value beginning with U+FFFF is always
 * an encoded one. Everything else is stored as it is. Readers that serve values
 * (`readStoredText`) give back exactly the value the directory holds.
 *
 * @example
 * storableText("a\u0000b")                  // "\uFFFFb64:YQBi"
 * readStoredText(storableText("a\u0000b"))  // "a\u0000b"
 */
const MARK = "\uFFFF";
const ENCODED = `${MARK}b64:`;

export function storableText(text: string): string {
  if (!text.includes("\u0000") && !text.startsWith(MARK)) return text;
  return ENCODED + Buffer.from(text, "utf8").toString("base64");
}

export function readStoredText(stored: string): string {
  if (!stored.startsWith(ENCODED)) return stored;
  return Buffer.from(stored.slice(ENCODED.length), "base64").toString("utf8");
}
