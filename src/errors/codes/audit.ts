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
  ANNAL_BEFORE_RETENTION: {
    status: 410,
    meaning:
      "The moment asked for (`at`, `--at`, the start of `during`, or of the period `annal simulate` and GraphQL's `simulateWorkflow` replay: `--from`, `from`) is before the retention horizon: the log no longer holds the history of that time (`[retention] keep`; for a simulation also the finished workflow instances folded before `[retention.streams] workflow`'s horizon). The answer names the horizon.",
    hint: "ask for a moment at or after the horizon the answer names",
    surfaces: ["rest"],
  },
  ANNAL_RETENTION_IN_PROGRESS: {
    status: 409,
    meaning:
      "Another retention run (`annal retention run`, or the workers' periodic one) holds the log.",
    hint: "wait for it to finish, then run again if needed",
  },
  ANNAL_RETENTION_NOT_CONFIGURED: {
    status: 400,
    meaning:
      "`annal retention run` was asked for, but the configuration keeps everything: no `[retention] keep` (nor `[retention.streams]`).",
    hint: 'set [retention] keep = "7y" (or the length the law asks for)',
  },
  ANNAL_ERASURE_ENTRY_PRESENT: {
    status: 409,
    meaning:
      "An erasure names an entry that is still in the directory: its values would be recorded again by the next change or snapshot.",
    hint: "delete the entry from the directory first, then erase its history",
  },
  ANNAL_ERASURE_ENTRY_UNKNOWN: {
    status: 404,
    meaning: "An erasure names an entry (id or DN) the log has never recorded.",
    hint: "name the entry by its id (entryUUID) or its DN as it was",
  },
  ANNAL_ERASURE_REASON_MISSING: {
    status: 400,
    meaning:
      "An erasure was asked for without a reason; the erasure's event records why it was made.",
    hint: 'give one: --reason "erasure request 2026-117"',
  },
} as const satisfies Record<string, ErrorCodeSpec>;
