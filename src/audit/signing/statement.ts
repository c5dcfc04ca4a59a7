import { sign, verify, type KeyObject } from "node:crypto";
import { AnnalError } from "../../errors/index.ts";
import type { SigningKey } from "./keys.ts";

/**
 * What an export's signature says: the exact bytes' SHA-256 and length, the log position the
 * export reflects (the entries projection's checkpoint in the export's own snapshot) and the
 * hash chain's head there (the last link at or before that position: the chain may trail the
 * projection by a moment, so it names its own position).
 */
export interface ExportStatement {
  readonly alg: "Ed25519";
  readonly kid: string;
  readonly sha256: string;
  readonly bytes: number;
  readonly logPosition: { readonly position: number; readonly transaction: string };
  readonly chainHead: { readonly position: number; readonly hash: string } | null;
  readonly signedAt: string;
}

/**
 * The `Annal-Signature` value: `<statement>.<signature>`, each base64url; the signature is
 * Ed25519 over the statement's bytes as carried (a detached signature: Ed25519 cannot sign a
 * streamed body as it streams, so it signs a statement that holds the body's SHA-256).
 */
export function signStatement(statement: ExportStatement, key: SigningKey): string {
  const bytes = Buffer.from(JSON.stringify(statement), "utf8");
  return `${bytes.toString("base64url")}.${sign(null, bytes, key.privateKey).toString("base64url")}`;
}

/** The statement inside an `Annal-Signature` value, not yet checked. */
export function readSignature(value: string): {
  statement: ExportStatement;
  bytes: Buffer;
  signature: Buffer;
} {
  const [statementPart, signaturePart, ...rest] = value.trim().split(".");
  const unreadable = () =>
    new AnnalError("ANNAL_SIGNATURE_UNREADABLE", "the signature is not an Annal-Signature value");
  if (!statementPart || !signaturePart || rest.length > 0) throw unreadable();
  const bytes = Buffer.from(statementPart, "base64url");
  let statement: ExportStatement;
  try {
    statement = JSON.parse(bytes.toString("utf8")) as ExportStatement;
  } catch {
    throw unreadable();
  }
  if (
    statement?.alg !== "Ed25519" ||
    typeof statement.kid !== "string" ||
    typeof statement.sha256 !== "string"
  ) {
    throw unreadable();
  }
  return { statement, bytes, signature: Buffer.from(signaturePart, "base64url") };
}

/** Whether `signature` is the key's Ed25519 signature of `bytes`. */
export function signatureHolds(bytes: Buffer, signature: Buffer, publicKey: KeyObject): boolean {
  return verify(null, bytes, publicKey, signature);
}
