/**
 * Global IDs name an entry together with its type, as GraphQL's Relay convention does:
 * standard base64 of `<type>:<entryUUID>`. Clients treat them as opaque; the REST channel
 * accepts them wherever an entry ID goes, in base64 or base64url, with or without padding.
 *
 * @example
 * globalId("user", "5f0c…"); // "dXNlcjo1ZjBj…"
 * parseGlobalId("dXNlcjo1ZjBj…"); // { type: "user", entryUUID: "5f0c…" }
 */
export function globalId(type: string, entryUUID: string): string {
  return Buffer.from(`${type}:${entryUUID.toLowerCase()}`, "utf8").toString("base64");
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BASE64 = /^[A-Za-z0-9+/_-]{8,200}={0,2}$/;
const DECODED = /^([A-Za-z][A-Za-z0-9_-]*):([0-9a-fA-F-]{36})$/;

/** The type and entryUUID in a global ID, or undefined when `text` is not one. */
export function parseGlobalId(text: string): { type: string; entryUUID: string } | undefined {
  if (!BASE64.test(text)) return undefined;
  const normal = text.replaceAll("-", "+").replaceAll("_", "/").replace(/=+$/, "");
  const bytes = Buffer.from(normal, "base64");
  // Node's decoder skips what it cannot read; a real ID encodes back to what was given.
  if (bytes.toString("base64").replace(/=+$/, "") !== normal) return undefined;
  const match = DECODED.exec(bytes.toString("utf8"));
  if (!match || !UUID.test(match[2]!)) return undefined;
  return { type: match[1]!, entryUUID: match[2]!.toLowerCase() };
}
