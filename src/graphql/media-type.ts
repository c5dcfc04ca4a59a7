import Negotiator from "negotiator";
import { GRAPHQL_CODES } from "./errors.ts";

/** The GraphQL-over-HTTP media type, whose status codes say what went wrong. */
export const GRAPHQL_RESPONSE_JSON = "application/graphql-response+json";

/** What `/graphql` answers in: the spec's own type, or the legacy `application/json`. */
export type ResponseMediaType = "application/json" | typeof GRAPHQL_RESPONSE_JSON;

/**
 * The media type of the answer, from the request's `Accept`: `application/graphql-response+json`
 * when the client prefers it (or accepts only it); `application/json` otherwise, including
 * without `Accept` and for `*∕*`, which is what the product documents promise legacy clients.
 */
export function responseMediaType(headers: {
  readonly accept?: string | undefined;
}): ResponseMediaType {
  if (headers.accept === undefined || headers.accept.trim() === "") return "application/json";
  const chosen = new Negotiator({ headers: { accept: headers.accept } }).mediaType([
    "application/json",
    GRAPHQL_RESPONSE_JSON,
  ]);
  return chosen === GRAPHQL_RESPONSE_JSON ? GRAPHQL_RESPONSE_JSON : "application/json";
}

/** The status an `errors` entry's code names when an answer has no `data`. */
const STATUS_BY_CODE: Readonly<Record<string, number>> = {
  [GRAPHQL_CODES.unauthenticated]: 401,
  [GRAPHQL_CODES.forbidden]: 403,
  [GRAPHQL_CODES.notFound]: 404,
  [GRAPHQL_CODES.methodNotAllowed]: 405,
  [GRAPHQL_CODES.conflict]: 409,
  [GRAPHQL_CODES.internal]: 500,
  [GRAPHQL_CODES.restBackend]: 502,
  [GRAPHQL_CODES.unavailable]: 503,
};

/**
 * The status of an answer in `application/graphql-response+json`: a document refused before
 * execution (parse, validation, a limit, variables that do not coerce) is 400, and so is any
 * answer without `data` unless its first error's code names another status (401, 403, 503 …);
 * an answer with `data` is 200. In `application/json` every such answer stays 200, as the
 * product documents say.
 */
export function graphqlResponseStatus(
  status: number,
  answer: { readonly hasData: boolean; readonly codes: readonly unknown[] },
): number {
  if (status !== 200 || answer.hasData) return status;
  const first = answer.codes[0];
  return (typeof first === "string" ? STATUS_BY_CODE[first] : undefined) ?? 400;
}
