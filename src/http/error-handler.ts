import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { errorHeaders } from "../errors.ts";
import { mapError, notFound, PROBLEM_CONTENT_TYPE, type Problem } from "./problem.ts";

/**
 * Installs the server's one error path: every thrown error, every unmatched route and
 * Fastify's own router errors answer `application/problem+json` (see `mapError`).
 * Registered on the root instance, so plugins mounted later inherit it.
 */
export function installErrorHandling(server: FastifyInstance): void {
  server.setErrorHandler((error, request, reply) => {
    const { problem, internal } = mapError(error, request.id);
    if (internal) request.log.error({ err: error }, "request failed");
    else request.log.info({ code: problem.code, status: problem.status }, problem.detail);
    void reply.headers(errorHeaders(error));
    return sendProblem(reply, problem);
  });

  server.setNotFoundHandler((request, reply) =>
    sendProblem(reply, notFound(request.method, request.url)),
  );
}

/** For Fastify's `frameworkErrors` option: errors raised before routing (a bad URL). */
export function frameworkErrorHandler(
  error: Error,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  const { problem } = mapError(error, request.id);
  void sendProblem(reply, problem);
}

function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  return reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problem);
}
