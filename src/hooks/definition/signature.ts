import { createHmac, timingSafeEqual } from "node:crypto";

/** Standard Webhooks' header names, the default of every webhook. */
export const STANDARD_HEADERS = {
  id: "webhook-id",
  timestamp: "webhook-timestamp",
  signature: "webhook-signature",
} as const;

/** More signatures than this in one header is not a rotation but an attempt to make us work. */
const MAX_SIGNATURES = 10;
const SHA256_BYTES = 32;

/**
 * The HMAC key of a secret. A Standard Webhooks secret (`whsec_<base64>`, as their libraries
 * generate them) stands for the bytes its base64 encodes; any other secret is its UTF-8 bytes.
 */
export function signingKey(secret: string): Buffer {
  return secret.startsWith("whsec_")
    ? Buffer.from(secret.slice("whsec_".length), "base64")
    : Buffer.from(secret, "utf8");
}

/** The signature of one delivery: `v1,<base64 of HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`. */
export function signDelivery(
  secret: string,
  id: string,
  timestamp: number | string,
  body: Buffer | string,
): string {
  return `v1,${digest(signingKey(secret), id, String(timestamp), body).toString("base64")}`;
}

function digest(key: Buffer, id: string, timestamp: string, body: Buffer | string): Buffer {
  return createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest();
}

/**
 * True when one of the `v1` signatures in `header` (space-separated; other versions are
 * ignored) is the HMAC of `<id>.<timestamp>.<body>` under one of `secrets`. The body is the
 * exact bytes received: a re-serialised body (other whitespace, other key order) fails.
 * Compared with `timingSafeEqual`, so the time taken says nothing about how much matched.
 */
export function verifyDelivery(
  secrets: readonly string[],
  id: string,
  timestamp: string,
  body: Buffer,
  header: string,
): boolean {
  const given = parseSignatures(header);
  if (given.length === 0) return false;
  for (const secret of secrets) {
    const expected = digest(signingKey(secret), id, timestamp, body);
    for (const signature of given) {
      if (timingSafeEqual(signature, expected)) return true;
    }
  }
  return false;
}

/** The `v1` signatures of a header, decoded; only well-formed 32-byte ones are kept. */
function parseSignatures(header: string): Buffer[] {
  const tokens = header.split(/[\s]+/).filter((token) => token !== "");
  if (tokens.length > MAX_SIGNATURES) return [];
  const signatures: Buffer[] = [];
  for (const token of tokens) {
    if (!token.startsWith("v1,")) continue;
    const base64 = token.slice(3);
    if (!/^[A-Za-z0-9+/]{43}=$/.test(base64)) continue;
    const bytes = Buffer.from(base64, "base64");
    if (bytes.length === SHA256_BYTES) signatures.push(bytes);
  }
  return signatures;
}
