import { createHash, createPublicKey } from "node:crypto";
import { createReadStream } from "node:fs";
import { AnnalError } from "../../errors/index.ts";
import { readSignature, signatureHolds, type ExportStatement } from "./statement.ts";

/**
 * Checks a signed export offline, with the public keys alone (`/api/keys`, a JWK set): the
 * signature over its statement with the key the statement names, then the file's length and
 * SHA-256 against the statement's. Reads the file as a stream, in constant memory.
 *
 * @throws AnnalError `ANNAL_SIGNATURE_INVALID` when any of it does not hold,
 *   `ANNAL_PUBLIC_KEY_UNKNOWN` when the keys hold none with the statement's id,
 *   `ANNAL_SIGNATURE_UNREADABLE` when `signature` is not an `Annal-Signature` value.
 */
export async function verifyExport(
  file: string,
  signature: string,
  keys: { readonly keys?: readonly Record<string, unknown>[] },
): Promise<ExportStatement> {
  const signed = readSignature(signature);
  const { statement } = signed;
  const jwk = (keys.keys ?? []).find((key) => key.kid === statement.kid);
  if (!jwk) {
    throw new AnnalError(
      "ANNAL_PUBLIC_KEY_UNKNOWN",
      `no public key given has the id ${statement.kid}, which signed the export`,
    );
  }
  const publicKey = createPublicKey({
    key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x } as never,
    format: "jwk",
  });
  if (!signatureHolds(signed.bytes, signed.signature, publicKey)) {
    throw invalid(`the signature is not key ${statement.kid}'s signature of its statement`);
  }
  const digest = createHash("sha256");
  let bytes = 0;
  for await (const chunk of createReadStream(file)) {
    digest.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  if (bytes !== statement.bytes || digest.digest("hex") !== statement.sha256) {
    throw invalid(`${file} is not the file that was signed: its bytes changed`);
  }
  return statement;
}

function invalid(message: string): AnnalError {
  return new AnnalError("ANNAL_SIGNATURE_INVALID", message);
}
