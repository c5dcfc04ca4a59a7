import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import { ENTRIES_PROJECTION } from "../../../projections/entries/index.ts";
import { readLinkAtOrBefore, signStatement, type SigningKey } from "../../audit/index.ts";
import type { PoolClient } from "../../db/index.ts";
import { readCheckpoint, schemaNames } from "../../projector/index.ts";
import { START } from "../../store/index.ts";

/** The trailer that carries an export's signature (`signStatement`). */
export const SIGNATURE_TRAILER = "Annal-Signature";

export interface SignedExport {
  /** Sent with the status line: what the signature will say, and that a trailer follows. */
  readonly headers: Readonly<Record<string, string>>;
  /** Passes the body through, hashing it, and adds the signature as a trailer at its end. */
  sign(body: AsyncIterable<string>, response: ServerResponse): AsyncGenerator<string>;
}

/**
 * Prepares a signed export on `connection`, before the export's rows are read there: opens a
 * read-only REPEATABLE READ transaction (the caller ends it), so that the entries projection's
 * checkpoint read first is the log position the rows reflect, and finds the chain's head at
 * that position.
 *
 * Why a trailer: the body streams in constant memory, so its hash is known only once the last
 * byte is written; a header goes before the first. The signature comes as the HTTP trailer
 * `Annal-Signature` (chunked transfer coding); the headers say in advance what it will cover.
 */
export async function beginSignedExport(
  connection: PoolClient,
  key: SigningKey,
): Promise<SignedExport> {
  await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
  const checkpoint = await readCheckpoint(connection, schemaNames(ENTRIES_PROJECTION).live);
  const at = checkpoint ?? START;
  const link = await readLinkAtOrBefore(connection, at);
  const chainHead = link ? { position: link.at.position, hash: link.hash.toString("hex") } : null;
  const logPosition = { position: at.position, transaction: at.transactionId };
  return {
    headers: {
      trailer: SIGNATURE_TRAILER,
      "annal-signature-key": key.kid,
      "annal-log-position": String(at.position),
      ...(chainHead ? { "annal-chain-head": `${chainHead.position}:${chainHead.hash}` } : {}),
    },
    async *sign(body, response) {
      const digest = createHash("sha256");
      let bytes = 0;
      for await (const chunk of body) {
        const encoded = Buffer.from(chunk, "utf8");
        digest.update(encoded);
        bytes += encoded.length;
        yield chunk;
      }
      const signature = signStatement(
        {
          alg: "Ed25519",
          kid: key.kid,
          sha256: digest.digest("hex"),
          bytes,
          logPosition,
          chainHead,
          signedAt: new Date().toISOString(),
        },
        key,
      );
      response.addTrailers({ [SIGNATURE_TRAILER]: signature });
    },
  };
}
