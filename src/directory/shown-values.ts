import type { FilterNode } from "../filters/index.ts";
import { guidText } from "./identity.ts";

/**
 * How the channels show a binary value that Active Directory's own tools show as text: a
 * security identifier (attribute syntax 2.5.5.17: `objectSid`, `tokenGroups`, `sIDHistory`,
 * `securityIdentifier` …) as `S-1-5-21-…`, `objectGUID` as the GUID text Windows shows. The
 * log keeps the bytes (base64); only what is served changes, and each form reads back to the
 * same bytes.
 */
export type ShownAs = "sid" | "guid";

/** The most sub-authorities a SID has (MS-DTYP 2.4.2: SubAuthorityCount ≤ 15). */
const MAX_SUB_AUTHORITIES = 15;

/**
 * A SID's bytes (MS-DTYP 2.4.2.2: revision, sub-authority count, a 48-bit big-endian
 * identifier authority, then 32-bit little-endian sub-authorities) as its string form
 * (MS-DTYP 2.4.2.1), `S-1-5-21-2985239592-771806441-3447133094-500`; undefined when the bytes
 * are not a SID.
 */
export function sidText(bytes: Buffer): string | undefined {
  if (bytes.length < 8 || bytes[0] !== 1) return undefined;
  const count = bytes[1]!;
  if (count > MAX_SUB_AUTHORITIES || bytes.length !== 8 + 4 * count) return undefined;
  const authority = bytes.readUIntBE(2, 6);
  // An authority of 2^32 or more is written in hexadecimal (MS-DTYP 2.4.2.1).
  const shown = authority < 2 ** 32 ? String(authority) : `0x${bytes.toString("hex", 2, 8)}`;
  const parts = [`S-1-${shown}`];
  for (let i = 0; i < count; i++) parts.push(String(bytes.readUInt32LE(8 + 4 * i)));
  return parts.join("-");
}

const SID_TEXT = /^S-1-(\d+|0x[0-9a-f]{12})((?:-\d+){0,15})$/i;

/** `S-1-5-21-…` as the SID's bytes; undefined when the text is not a SID's string form. */
export function sidBytes(text: string): Buffer | undefined {
  const match = SID_TEXT.exec(text);
  if (!match) return undefined;
  const [, authorityText, rest] = match;
  const authority = authorityText!.toLowerCase().startsWith("0x")
    ? Number.parseInt(authorityText!.slice(2), 16)
    : Number(authorityText);
  if (!Number.isSafeInteger(authority) || authority >= 2 ** 48) return undefined;
  const subs = rest ? rest.slice(1).split("-").map(Number) : [];
  if (subs.some((sub) => !Number.isInteger(sub) || sub > 0xffffffff)) return undefined;
  const bytes = Buffer.alloc(8 + 4 * subs.length);
  bytes[0] = 1;
  bytes[1] = subs.length;
  bytes.writeUIntBE(authority, 2, 6);
  subs.forEach((sub, i) => bytes.writeUInt32LE(sub, 8 + 4 * i));
  return bytes;
}

const GUID_TEXT = /^\{?([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})\}?$/i;

/** GUID text as Windows writes it (braces optional) as objectGUID's 16 bytes; else undefined. */
export function guidBytes(text: string): Buffer | undefined {
  const match = GUID_TEXT.exec(text);
  if (!match) return undefined;
  const [, a, b, c, d, e] = match;
  const reversed = (hex: string) => Buffer.from(hex, "hex").reverse();
  return Buffer.concat([reversed(a!), reversed(b!), reversed(c!), Buffer.from(d! + e!, "hex")]);
}

/**
 * A stored binary value (base64) as `shown` shows it; the stored text itself when its bytes
 * are not of that form (a value of another shape is never lost, only not made pretty).
 */
export function shownText(shown: ShownAs, stored: string): string {
  const bytes = Buffer.from(stored, "base64");
  return (shown === "sid" ? sidText(bytes) : guidText(bytes)) ?? stored;
}

/**
 * A value given as `shown` shows values (in a filter) as the log stores it (base64); the text
 * itself when it is not of that form (base64 as stored is then compared as it is).
 */
export function storedFromShown(shown: ShownAs, text: string): string {
  const bytes = shown === "sid" ? sidBytes(text) : guidBytes(text);
  return bytes === undefined ? text : bytes.toString("base64");
}

/**
 * A filter with the values of its equality, approximate and ordering items on attributes shown
 * as text (`objectSid=S-1-5-21-…`, `objectGUID=…`) put as the projections store them, so that
 * the SQL compilers compare bytes with bytes. `shownOf` tells how an attribute (by the
 * filter's, already canonical, name) is shown. Substring items are left as they are: a SID's
 * text prefix is no prefix of its bytes' base64.
 */
export function filterAsStored(
  ast: FilterNode,
  shownOf: (attribute: string) => ShownAs | undefined,
): FilterNode {
  switch (ast.op) {
    case "and":
    case "or":
      return { op: ast.op, filters: ast.filters.map((f) => filterAsStored(f, shownOf)) };
    case "not":
      return { op: "not", filter: filterAsStored(ast.filter, shownOf) };
    case "present":
    case "substring":
      return ast;
    default: {
      const shown = shownOf(ast.attribute);
      return shown === undefined ? ast : { ...ast, value: storedFromShown(shown, ast.value) };
    }
  }
}
