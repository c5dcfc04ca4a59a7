import type { FastifyReply, FastifyRequest } from "fastify";
import {
  classifyError,
  PROBLEM_CONTENT_TYPE,
  problemOf,
  type ClassifiedError,
} from "../errors/index.ts";
import { noteRefusal } from "./request-log.ts";

/**
 * Answers `error` as problem+json: logged with its stack when it is our fault, its code on
 * the request's line otherwise; with the headers it carries. An error met after a response started
 * streaming cannot change it: the stream is cut.
 */
export function sendProblem(
  error: unknown,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  const classified = classifyError(error, request.id);
  logClassified(request, error, classified);
  if (reply.sent) return reply;
  return reply
    .code(classified.status)
    .headers(classified.headers)
    .type(PROBLEM_CONTENT_TYPE)
    .send(problemOf(classified));
}

/**
 * Logs a request's error as the classifier reads it: a fault at once with its stack; a
 * refusal as its code and message on the request's one line (`logRequests`).
 */
export function logClassified(
  request: FastifyRequest,
  error: unknown,
  classified: ClassifiedError,
): void {
  if (classified.internal) request.log.error({ err: error }, "request failed");
  else noteRefusal(request, { code: classified.code, message: classified.message });
}
