import { z } from "zod";
import { text } from "../fields.ts";

export function auditSection() {
  return z
    .strictObject(
      {
        signingKey: text().optional().meta({
          description:
            "The Ed25519 private key (PEM, PKCS #8) that signs exports, as a `${VARIABLE}` reference. Without it annal generates one into `<database.dataDir>/export-signing-key.pem` on first use and keeps it; processes on several machines then sign with keys of their own. Every key's public half is published in the database when first used and served by every process at `/api/keys`, so an export checks whichever process signed it, and after the key is replaced.",
          example: "${ANNAL_SIGNING_KEY}",
        }),
      },
      { error: "expected a table: [audit]" },
    )
    .prefault({})
    .meta({
      description:
        'The tamper-evident log and signed exports: the key that signs exports (`export={"sign":true}`).',
    });
}
