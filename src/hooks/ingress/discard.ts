import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * How much of a refused body annal reads past the refusal, and throws away, before it gives up
 * on the connection. A sender writes its whole body before it reads the answer.
 */
const DISCARD_LIMIT_BYTES = 64 * 1024 * 1024;

/**
 * Keeps reading a request whose answer is given before its body has all arrived (over
 * `limits.bodyBytes`, or refused from its headers), and throws the bytes away. Closing instead
 * (Fastify's `Connection: close` after a body over its limit) resets the connection while the
 * sender still writes, and the reset can destroy the answer before the sender reads it: a sender
 * that sees a reset and no 413 resends the same body for ever. So the connection stays open,
 * and is cut only past `DISCARD_LIMIT_BYTES` more.
 */
export function discardRestOfBody(request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw;
  if (raw.complete || raw.destroyed) return;
  reply.removeHeader("connection");
  let discarded = 0;
  raw.on("data", (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_LIMIT_BYTES) raw.socket.destroy();
  });
  raw.resume();
}
