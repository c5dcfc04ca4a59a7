import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { routeNotFound } from "../errors/index.ts";
import { sendProblem } from "./problem.ts";

/**
 * Installs the server's one error path: every thrown error, every unmatched route and
 * Fastify's own router errors answer `application/problem+json` (see `classifyError`).
 * Registered on the root instance, so plugins mounted later inherit it.
 */
export function installErrorHandling(server: FastifyInstance): void {
  server.setErrorHandler((error, request, reply) => sendProblem(error, request, reply));
  server.setNotFoundHandler((request, reply) =>
    sendProblem(routeNotFound(request.method, request.url), request, reply),
  );
}

/** For Fastify's `frameworkErrors` option: errors raised before routing (a bad URL). */
export function frameworkErrorHandler(
  error: Error,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  void sendProblem(error, request, reply);
}
