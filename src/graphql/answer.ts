import type { FastifyReply, FastifyRequest } from "fastify";
import type { GraphQLError } from "graphql";
import { codedError, formatGraphqlError, GRAPHQL_CODES, type GraphqlCode } from "./errors.ts";
import { CompiledData } from "./gateway/compile.ts";
import type { ReadState } from "./gateway/read-state.ts";
import { graphqlResponseStatus, type ResponseMediaType } from "./media-type.ts";
import type { Payload } from "./options.ts";

/** Codes of errors that refuse a document before execution: still a 200 answer. */
const DOCUMENT_CODES = new Set<unknown>([
  GRAPHQL_CODES.parseFailed,
  GRAPHQL_CODES.validationFailed,
  GRAPHQL_CODES.depthLimit,
  GRAPHQL_CODES.aliasLimit,
  GRAPHQL_CODES.directiveLimit,
  GRAPHQL_CODES.costLimit,
]);

/**
 * Sends a helix result: every error coded; a document refused by parsing, validation or a
 * limit answers 200 in `application/json` and 400 in `application/graphql-response+json`
 * (where an answer without `data` is never 200); helix's other refusals (no query, a mutation
 * over GET) keep their status.
 */
export function answer(
  reply: FastifyReply,
  request: FastifyRequest,
  mediaType: ResponseMediaType,
  status: number,
  payload: Payload,
  state: ReadState,
) {
  const fallback: GraphqlCode =
    status === 405
      ? GRAPHQL_CODES.methodNotAllowed
      : status >= 400 && status < 500
        ? GRAPHQL_CODES.badRequest
        : GRAPHQL_CODES.internal;
  const errors = (payload.errors ?? []).map((error) => {
    if (status === 200 || typeof error.extensions?.code === "string") {
      const { error: formatted, internal } = formatGraphqlError(error, request.id);
      if (internal)
        request.log.error(
          { err: error.originalError ?? error, path: error.path },
          "GraphQL field failed",
        );
      return formatted;
    }
    return codedError(error.message, fallback);
  });
  const refusedDocument =
    errors.length > 0 && errors.every((error) => DOCUMENT_CODES.has(error.extensions.code));
  const legacyStatus = refusedDocument ? 200 : status;
  const finalStatus =
    mediaType === "application/json"
      ? legacyStatus
      : graphqlResponseStatus(legacyStatus, {
          hasData: payload.data !== undefined,
          codes: errors.map((error) => error.extensions.code),
        });
  // The database gone under a field (a PostgreSQL restart): the whole answer is a 503 to send
  // again, with Retry-After, as REST answers; application/json keeps its 200.
  const unreachable = errors.find(
    (error) => error.extensions.code === "ANNAL_DATABASE_UNREACHABLE",
  );
  if (unreachable) reply.header("retry-after", String(unreachable.extensions.retryAfter ?? 5));
  const { data } = payload;
  const body = {
    ...(data === undefined || data instanceof CompiledData ? {} : { data }),
    ...(errors.length === 0 ? {} : { errors }),
    ...state.extensions(),
  };
  // An operation compiled to SQL: its data is the JSON text PostgreSQL built, as it is.
  const text = JSON.stringify(body);
  return reply
    .code(unreachable && mediaType !== "application/json" ? 503 : finalStatus)
    .type(`${mediaType}; charset=utf-8`)
    .send(
      data instanceof CompiledData
        ? `{"data":${data.json}${text === "{}" ? "}" : `,${text.slice(1)}`}`
        : text,
    );
}

/** Sends errors alone, in the media type the client asked for. */
export function sendErrors(
  reply: FastifyReply,
  status: number,
  errors: readonly GraphQLError[],
  mediaType: ResponseMediaType,
) {
  return reply.code(status).type(`${mediaType}; charset=utf-8`).send(JSON.stringify({ errors }));
}
