import type { FastifyReply, FastifyRequest } from "fastify";
import { errorHeaders } from "../errors.ts";
import { InvalidDNError } from "../directory/index.ts";
import {
  FilterSyntaxError,
  FilterTooComplexError,
  FilterUnsupportedError,
} from "../filters/index.ts";
import { EntryNotFoundError } from "../history/index.ts";
import { mapError, PROBLEM_CONTENT_TYPE, type Problem } from "../http/index.ts";
import { RestError } from "./errors.ts";

/** RFC 9457 extension members of an error, beyond `code` and `hint`. */
function extensionMembers(error: unknown): Record<string, unknown> {
  if (error instanceof RestError) return { ...error.extras };
  if (error instanceof FilterSyntaxError) {
    return {
      parameter: "filter",
      format: error.format,
      position: error.position,
      expected: error.expected,
    };
  }
  if (error instanceof FilterUnsupportedError) {
    return {
      parameter: "filter",
      format: error.format,
      position: error.position,
      feature: error.feature,
    };
  }
  if (error instanceof FilterTooComplexError) {
    return { parameter: "filter", limit: error.limit, maximum: error.maximum };
  }
  if (error instanceof EntryNotFoundError) {
    return {
      reason: error.reason,
      ...(error.since === undefined ? {} : { since: error.since.toISOString() }),
    };
  }
  if (error instanceof InvalidDNError) return { parameter: "id" };
  return {};
}

/** The problem body for an error met while answering a request of the REST channel. */
export function restProblem(
  error: unknown,
  requestId: string,
): { problem: Problem; internal: boolean } {
  const { problem, internal } = mapError(error, requestId);
  // Extension members come first so that none can replace a member RFC 9457 defines.
  return { problem: { ...extensionMembers(error), ...problem } as Problem, internal };
}

/**
 * The REST channel's error handler: RFC 9457 problem details with annal's `code` and `hint`
 * (as the server's own mapping gives them) plus the members that locate the fault, and
 * `WWW-Authenticate` on a 401 (RFC 6750).
 */
export function sendRestError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const { problem, internal } = restProblem(error, request.id);
  if (internal) request.log.error({ err: error }, "request failed");
  else request.log.info({ code: problem.code, status: problem.status }, problem.detail);
  void reply.headers(errorHeaders(error));
  if (problem.status === 429) reply.header("retry-after", "5");
  // An error met after a response started streaming cannot change it; the stream is cut.
  if (reply.sent) return reply;
  return reply.code(problem.status).type(PROBLEM_CONTENT_TYPE).send(problem);
}
