import { IDENTITY_ATTRIBUTES } from "../config/index.ts";
import type { FilterNode } from "../filters/index.ts";
import { eq, eqBytes, or } from "./filter.ts";

/**
 * An entry's identity: what the server keeps for it that no rename, move or change of
 * attributes alters, as canonical UUID text (lower case, 8-4-4-4-12). The log's streams, the
 * REST channel's and GraphQL's `entryUUID` are this identity, whichever server it comes from:
 *
 * - `entryUUID` (RFC 4530): OpenLDAP, and 389 Directory Server with its entryUUID plugin;
 * - `nsUniqueId`: 389 Directory Server always (`66446001-1dd211b2-800000a4-3c1b6c6c`: the
 *   same 128 bits, grouped 8-8-8-8);
 * - `objectGUID`: Active Directory, 16 bytes whose first three fields are little-endian (a
 *   GUID as Windows writes it, `{01234567-89ab-cdef-...}`, reads them that way).
 *
 * `auto` takes the first of these an entry has.
 */
export { IDENTITY_ATTRIBUTES };

export type IdentityAttribute = (typeof IDENTITY_ATTRIBUTES)[number];
export type IdentitySetting = "auto" | IdentityAttribute;

/** The attributes a search asks for by name so that the identity comes back. */
export function identityAttributes(setting: IdentitySetting): readonly IdentityAttribute[] {
  return setting === "auto" ? IDENTITY_ATTRIBUTES : [setting];
}

/**
 * The identity of an entry from its values, as annal stores them (text; binary values, such
 * as objectGUID's, in base64), or undefined when it has none that `setting` allows. `values`
 * looks an attribute up by name (a server may spell it otherwise: compare without case).
 *
 * @example
 * entryIdentity("auto", (name) => name === "nsUniqueId" ? ["66446001-1dd211b2-800000a4-3c1b6c6c"] : undefined)
 * // "66446001-1dd2-11b2-8000-00a43c1b6c6c"
 */
export function entryIdentity(
  setting: IdentitySetting,
  values: (name: IdentityAttribute) => readonly string[] | undefined,
): string | undefined {
  for (const attribute of identityAttributes(setting)) {
    const value = values(attribute)?.[0];
    if (value === undefined) continue;
    const identity = canonicalIdentity(attribute, value);
    if (identity) return identity;
  }
  return undefined;
}

/**
 * One identity value as canonical UUID text, or undefined when it is not one: objectGUID's as
 * the log stores it (base64) or as GUID text.
 */
export function canonicalIdentity(attribute: IdentityAttribute, value: string): string | undefined {
  switch (attribute) {
    case "entryUUID":
    case "nsUniqueId":
      return uuidText(value.replace(/-/g, ""));
    case "objectGUID":
      // As the log keeps it (base64 of its bytes), or as a channel shows it (GUID text).
      return GUID_TEXT.test(value)
        ? uuidText(value.replace(/[{}-]/g, ""))
        : guidText(Buffer.from(value, "base64"));
  }
}

/** A GUID as Windows writes it, braces or not (base64 has no `-`: never taken for one). */
const GUID_TEXT = /^\{?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\}?$/i;

const HEX32 = /^[0-9a-f]{32}$/;

function uuidText(hex: string): string | undefined {
  const lower = hex.toLowerCase();
  if (!HEX32.test(lower)) return undefined;
  return `${lower.slice(0, 8)}-${lower.slice(8, 12)}-${lower.slice(12, 16)}-${lower.slice(16, 20)}-${lower.slice(20)}`;
}

/** AD's objectGUID bytes as the GUID text Windows shows (its first three fields reversed). */
export function guidText(bytes: Buffer): string | undefined {
  if (bytes.length !== 16) return undefined;
  const reordered = Buffer.from([
    bytes[3]!,
    bytes[2]!,
    bytes[1]!,
    bytes[0]!,
    bytes[5]!,
    bytes[4]!,
    bytes[7]!,
    bytes[6]!,
    ...bytes.subarray(8),
  ]);
  return uuidText(reordered.toString("hex"));
}

/**
 * The filter that finds the entry whose identity is `identity` (canonical UUID text), each
 * attribute `setting` allows written as the server writes it: entryUUID as UUID text,
 * nsUniqueId grouped 8-8-8-8, objectGUID as its 16 bytes (the first three fields
 * little-endian). `auto` asks for any of them, or of those `known` says the server has (an
 * attribute a server does not know matches nothing there). An entry found by one attribute may
 * have another identity under `auto` (389 with its entryUUID plugin has both): compare what it
 * is found with against `entryIdentity`. Undefined when `identity` is no UUID text.
 *
 * @example
 * identityFilter("nsUniqueId", "66446001-1dd2-11b2-8000-00a43c1b6c6c")
 * // (nsUniqueId=66446001-1dd211b2-800000a4-3c1b6c6c)
 */
export function identityFilter(
  setting: IdentitySetting,
  identity: string,
  known: (attribute: IdentityAttribute) => boolean = () => true,
): FilterNode | undefined {
  const uuid = uuidText(identity.replace(/-/g, ""));
  if (uuid === undefined || uuid !== identity.toLowerCase()) return undefined;
  const hex = uuid.replace(/-/g, "");
  const candidates = identityAttributes(setting);
  const asked = setting === "auto" ? candidates.filter(known) : candidates;
  const filters = (asked.length > 0 ? asked : candidates).map((attribute) => {
    switch (attribute) {
      case "entryUUID":
        return eq(attribute, uuid);
      case "nsUniqueId":
        return eq(attribute, hex.replace(/(.{8})(?!$)/g, "$1-"));
      case "objectGUID":
        return eqBytes(attribute, guidBytes(hex));
    }
  });
  return filters.length === 1 ? filters[0] : or(...filters);
}

/** GUID text's 32 hex digits as objectGUID's bytes: `guidText`'s inverse. */
function guidBytes(hex: string): Buffer {
  const bytes = Buffer.from(hex, "hex");
  return Buffer.concat([
    bytes.subarray(0, 4).reverse(),
    bytes.subarray(4, 6).reverse(),
    bytes.subarray(6, 8).reverse(),
    bytes.subarray(8),
  ]);
}
