import type { FastifyReply } from "fastify";
import { publishedSigningKeys, readChainHead } from "../../audit/index.ts";
import type { RestContext } from "../context.ts";

/** The head before anything is chained: position 0, the chain's starting hash. */
const EMPTY_HEAD = { position: 0, hash: "0".repeat(64), time: null };

/**
 * `GET /api/log/head`: the hash chain's head, the last event chained (its position and hash)
 * and when it was chained, for an auditor to pin and check later with `annal log verify`.
 */
export async function answerLogHead(context: RestContext, reply: FastifyReply) {
  const head = await readChainHead(context.pool);
  return reply.header("cache-control", "no-store").send(
    head
      ? {
          position: head.at.position,
          hash: head.hash.toString("hex"),
          time: head.chainedAt.toISOString(),
        }
      : EMPTY_HEAD,
  );
}

/**
 * `GET /api/keys`: the public keys that check signed exports, as a JWK set (RFC 7517): this
 * process's own and every key another process, or an earlier key, published.
 */
export async function answerPublicKeys(context: RestContext, reply: FastifyReply) {
  const own = await context.signingKey(); // published by now
  const keys = await publishedSigningKeys(context.pool);
  return reply
    .header("cache-control", "public, max-age=300")
    .type("application/jwk-set+json")
    .send({ keys: keys.some((key) => key.kid === own.kid) ? keys : [...keys, own.publicJwk] });
}
