import { AnnalError } from "../errors/index.ts";

/**
 * Distinguished names as text (RFC 4514): parsing a DN string into RDNs, and writing RDNs
 * back with the escaping the RFC asks for. Types and values are kept as written; comparing
 * DNs is `dn-compare.ts`'s.
 */

/** One `type=value` of an RDN. `ber` is set when the value was written `#hex` (RFC 4514 §2.4). */
export interface AttributeTypeAndValue {
  readonly type: string;
  /** The value; for a `#hex` value, its string content when the BER holds a string, else the hex. */
  readonly value: string;
  readonly ber?: Buffer;
}

/** A relative distinguished name: one or more AVAs joined by `+`. */
export type RDN = readonly AttributeTypeAndValue[];
/** RDNs from the entry itself (first) to the top of the tree (last). The root DSE is `[]`. */
export type DN = readonly RDN[];

export class InvalidDNError extends AnnalError {
  readonly dn: string;
  constructor(dn: string, reason: string) {
    super("ANNAL_DN_INVALID", `${JSON.stringify(dn)} is not a distinguished name: ${reason}`, {
      status: 400,
      hint: 'write it as in RFC 4514, e.g. "uid=alice,ou=people,dc=example,dc=org"; escape , + " \\ < > ; in values with a backslash',
    });
    this.dn = dn;
  }
}

const DESCR = /^[A-Za-z][A-Za-z0-9-]*$/;
const NUMERIC_OID = /^(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))+$/;
// ignoreBOM: a value may start with U+FEFF, and it must not be dropped
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Parses an RFC 4514 string; whitespace around `,`, `+` and `=` is allowed and dropped. */
export function parseDN(text: string): DN {
  const parser = new DNParser(text);
  return parser.parse();
}

class DNParser {
  private at = 0;
  private readonly text: string;

  constructor(text: string) {
    this.text = text;
  }

  parse(): DN {
    const rdns: RDN[] = [];
    this.skipSpaces();
    if (this.at === this.text.length) return rdns;
    for (;;) {
      const rdn: AttributeTypeAndValue[] = [this.ava()];
      while (this.text[this.at] === "+") {
        this.at++;
        rdn.push(this.ava());
      }
      rdns.push(rdn);
      if (this.at === this.text.length) return rdns;
      if (this.text[this.at] !== ",") this.fail(`unexpected ${JSON.stringify(this.text[this.at])}`);
      this.at++;
    }
  }

  private fail(reason: string): never {
    throw new InvalidDNError(this.text, `${reason} at position ${this.at + 1}`);
  }

  private skipSpaces(): void {
    while (this.text[this.at] === " ") this.at++;
  }

  private ava(): AttributeTypeAndValue {
    this.skipSpaces();
    const start = this.at;
    while (this.at < this.text.length && isTypeChar(this.text.charCodeAt(this.at))) this.at++;
    const type = this.text.slice(start, this.at);
    if (!DESCR.test(type) && !NUMERIC_OID.test(type)) {
      this.fail(
        type === "" ? "missing attribute type" : `invalid attribute type ${JSON.stringify(type)}`,
      );
    }
    this.skipSpaces();
    if (this.text[this.at] !== "=") this.fail(`expected "=" after ${type}`);
    this.at++;
    this.skipSpaces();
    const value = this.text[this.at] === "#" ? this.hexValue() : this.stringValue();
    this.skipSpaces();
    return { type, ...value };
  }

  private hexValue(): { value: string; ber: Buffer } {
    this.at++;
    const start = this.at;
    while (/[0-9A-Fa-f]/.test(this.text[this.at] ?? "")) this.at++;
    const hex = this.text.slice(start, this.at);
    if (hex.length === 0 || hex.length % 2 !== 0)
      this.fail("a #value needs an even number of hex digits");
    const ber = Buffer.from(hex, "hex");
    return { value: berString(ber) ?? `#${hex.toLowerCase()}`, ber };
  }

  /**
   * Reads up to an unescaped `,` or `+`; unescaped trailing spaces are not part of the value.
   * A value written without escapes, quotes or surrogates is its own text (most are: a DN
   * from the directory is parsed for every entry an import or a capture pass reads); any
   * other is decoded byte by byte.
   */
  private stringValue(): { value: string } {
    const start = this.at;
    let end = start;
    for (; end < this.text.length; end++) {
      const code = this.text.charCodeAt(end);
      if (code === 0x2c || code === 0x2b) break; // , +
      if (NEEDS_DECODING.has(code) || (code >= 0xd800 && code <= 0xdfff)) return this.decoded();
    }
    let last = end;
    while (last > start && this.text.charCodeAt(last - 1) === 0x20) last--;
    this.at = end;
    return { value: this.text.slice(start, last) };
  }

  private decoded(): { value: string } {
    const bytes: number[] = [];
    let significant = 0; // bytes up to the last escaped or non-space character
    while (this.at < this.text.length) {
      const char = this.text[this.at] as string;
      if (char === "," || char === "+") break;
      if (char === "\\") {
        const next = this.text[this.at + 1] ?? "";
        const hex = this.text.slice(this.at + 1, this.at + 3);
        if (/^[0-9A-Fa-f]{2}$/.test(hex)) {
          bytes.push(Number.parseInt(hex, 16));
          this.at += 3;
        } else if (next !== "" && '"+,;<>\\ #='.includes(next)) {
          bytes.push(next.charCodeAt(0));
          this.at += 2;
        } else {
          this.fail(`invalid escape "\\${next}"`);
        }
        significant = bytes.length;
        continue;
      }
      if ('";<>'.includes(char) || char === "\0")
        this.fail(`${JSON.stringify(char)} must be escaped`);
      const codePoint = this.text.codePointAt(this.at) as number;
      if (codePoint >= 0xd800 && codePoint <= 0xdfff) this.fail("unpaired surrogate");
      const encoded = Buffer.from(String.fromCodePoint(codePoint), "utf8");
      bytes.push(...encoded);
      this.at += codePoint > 0xffff ? 2 : 1;
      if (char !== " ") significant = bytes.length;
    }
    try {
      return { value: utf8.decode(Uint8Array.from(bytes.slice(0, significant))) };
    } catch {
      return this.fail("escaped bytes are not UTF-8");
    }
  }
}

/** `\\`, `"`, `;`, `<`, `>` and NUL: an escape to decode, or a character that must be escaped. */
const NEEDS_DECODING = new Set([0x5c, 0x22, 0x3b, 0x3c, 0x3e, 0x00]);

/** A character of an attribute type: a descriptor's letters, digits and `-`, an OID's `.`. */
function isTypeChar(code: number): boolean {
  return (
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x2e ||
    code === 0x2d
  );
}

/** The content of a BER-encoded string value (UTF8String, PrintableString, IA5String, ...). */
export function berString(ber: Buffer): string | undefined {
  const tag = ber[0];
  const stringTags = [0x04, 0x0c, 0x13, 0x14, 0x16, 0x1a];
  if (tag === undefined || !stringTags.includes(tag) || ber.length < 2) return undefined;
  let length = ber[1] as number;
  let offset = 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 3 || ber.length < 2 + count) return undefined;
    length = ber.subarray(2, 2 + count).reduce((sum, byte) => sum * 256 + byte, 0);
    offset = 2 + count;
  }
  if (offset + length !== ber.length) return undefined;
  try {
    return utf8.decode(ber.subarray(offset));
  } catch {
    return undefined;
  }
}

/** A value with something `escapeDNValue` escapes (the rules below, in one test). */
const NEEDS_ESCAPING = /["+,;<>\\\x00-\x1f\x7f]|^[ #]| $/;

/**
 * Escapes an attribute value for a DN string (RFC 4514 §2.4): `"+,;<>\` always, `#` and space
 * at the start, space at the end; control characters as `\hex` so a DN never hides one.
 */
export function escapeDNValue(value: string): string {
  if (!NEEDS_ESCAPING.test(value)) return value; // most values: nothing to escape
  let out = "";
  const chars = [...value];
  chars.forEach((char, index) => {
    const code = char.codePointAt(0) as number;
    if ('"+,;<>\\'.includes(char)) out += `\\${char}`;
    else if (code < 0x20 || code === 0x7f) out += `\\${code.toString(16).padStart(2, "0")}`;
    else if (index === 0 && (char === " " || char === "#")) out += `\\${char}`;
    else if (index === chars.length - 1 && char === " ") out += "\\ ";
    else out += char;
  });
  return out;
}

export function formatRDN(rdn: RDN): string {
  return rdn
    .map(
      (ava) => `${ava.type}=${ava.ber ? `#${ava.ber.toString("hex")}` : escapeDNValue(ava.value)}`,
    )
    .join("+");
}

/** Writes a DN as an RFC 4514 string, types and values as they are. */
export function formatDN(dn: DN): string {
  return dn.map(formatRDN).join(",");
}
