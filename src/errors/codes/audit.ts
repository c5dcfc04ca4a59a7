import type { ErrorCodeSpec } from "./spec.ts";

/** The tamper-evident log and signed exports (`src/audit/`). */
export const AUDIT_CODES = {
  ANNAL_LOG_TAMPERED: {
    status: 500,
    meaning:
      "`annal log verify` found an event that does not match the log's hash chain: it was changed, removed or inserted after it was chained. The message names the first such event.",
    hint: "restore the log from a backup you trust and compare; the chain head logged before names the last hash that held",
  },
  ANNAL_LOG_POSITION_UNKNOWN: {
    status: 400,
    meaning: "The event position named (`--from`, `--to`) is not in the log's hash chain (yet).",
    hint: "name the position of an event that exists; the chain follows the log within a second or so",
  },
  ANNAL_SIGNATURE_INVALID: {
    status: 400,
    meaning:
      "A signed export does not match its signature: the file changed after it was signed, the signature is not one annal made, or it was made with another key.",
  },
  ANNAL_SIGNATURE_UNREADABLE: {
    status: 400,
    meaning: "The signature given is not an annal export signature (the `Annal-Signature` value).",
    hint: "pass the Annal-Signature trailer's value as the export's server sent it",
  },
  ANNAL_SIGNING_KEY_INVALID: {
    status: 500,
    meaning:
      "The export signing key (`[audit] signingKey`, or the one in the data directory) is not an Ed25519 private key in PEM.",
    hint: "generate one: openssl genpkey -algorithm ed25519",
    surfaces: ["startup"],
  },
  ANNAL_PUBLIC_KEY_UNKNOWN: {
    status: 400,
    meaning: "The public keys given hold no key with the id the signature names.",
    hint: "fetch the keys from the server that made the export: /api/keys",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
