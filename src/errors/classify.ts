import { STATUS_CODES } from "node:http";
import { isAnnalError } from "./annal-error.ts";
import { catalogEntry, type ErrorCode } from "./codes/index.ts";
import { GRAPHQL_CODES } from "./graphql-codes.ts";
import { DatabaseUnreachableError, isDatabaseUnreachable } from "./database-unreachable.ts";

/**
 * What any error means to the one who made the request: the one reading of an error that
 * every surface renders from (REST's problem+json, the webhook's `{ "error": … }`, GraphQL's
 * `extensions`, the CLI's lines). Nothing else looks inside an error to answer it.
 */
export interface ClassifiedError {
  /** The code the user sees. */
  readonly code: string;
  /** The catalog code it is a case of (differs from `code` for a user's own code). */
  readonly kind: ErrorCode;
  readonly status: number;
  /** Ours, or our words for a framework's: never an internal error's own text. */
  readonly message: string;
  readonly hint: string | undefined;
  /** Members that locate the fault (the parameter, what was expected, ...). */
  readonly details: Readonly<Record<string, unknown>>;
  /** Response headers that belong to the error (`WWW-Authenticate`, `Retry-After`). */
  readonly headers: Readonly<Record<string, string>>;
  /** GraphQL's `extensions.code` for it. */
  readonly graphqlCode: string;
  /** Our fault: log it with its stack; the answer names only the request id. */
  readonly internal: boolean;
}

/**
 * Fastify's own client errors, by their code: each gets a stable annal code and a message of
 * ours (some of Fastify's messages echo the request, e.g. a bad URL component).
 */
const FRAMEWORK_ERRORS: Readonly<
  Record<string, { code: ErrorCode; message?: string; hint?: string }>
> = {
  FST_ERR_CTP_INVALID_JSON_BODY: {
    code: "ANNAL_BAD_REQUEST",
    message: "the request body is not valid JSON",
    hint: "send a JSON document, or a Content-Type that matches the body",
  },
  FST_ERR_CTP_EMPTY_JSON_BODY: {
    code: "ANNAL_BAD_REQUEST",
    message: "the request body is empty but its Content-Type is application/json",
    hint: "send a JSON document, or no Content-Type header",
  },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
    code: "ANNAL_BAD_REQUEST",
    message: "the request body's size does not match its Content-Length",
  },
  FST_ERR_CTP_BODY_TOO_LARGE: {
    code: "ANNAL_BODY_TOO_LARGE",
    message: "the request body is larger than this route accepts",
  },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: {
    code: "ANNAL_UNSUPPORTED_MEDIA_TYPE",
    message: "this route does not accept the request's Content-Type",
  },
  FST_ERR_BAD_URL: { code: "ANNAL_BAD_REQUEST", message: "the request URL is not valid" },
  FST_ERR_INVALID_URL: { code: "ANNAL_BAD_REQUEST", message: "the request URL is not valid" },
  FST_ERR_MAX_PARAM_LENGTH: {
    code: "ANNAL_URI_TOO_LONG",
    message: "a path parameter is longer than annal accepts",
  },
  // Fastify's schema-validation messages name the field and the rule, never the value.
  FST_ERR_VALIDATION: { code: "ANNAL_BAD_REQUEST" },
};

/**
 * 5xx answers that are no failure of annal's but a passing condition the client is told to
 * wait out (`Retry-After`): PostgreSQL away (logged once by the pool), the history still being
 * built on a first start. Not logged as "request failed" with a stack each time.
 */
const PASSING_CONDITIONS: ReadonlySet<string> = new Set([
  "ANNAL_DATABASE_UNREACHABLE",
  "ANNAL_HISTORY_BUILDING",
]);

/** Codes for any other 4xx an HTTP library raises, by status. */
const CLIENT_ERROR_CODES: Readonly<Record<number, ErrorCode>> = {
  400: "ANNAL_BAD_REQUEST",
  401: "ANNAL_UNAUTHENTICATED",
  403: "ANNAL_FORBIDDEN",
  404: "ANNAL_NOT_FOUND",
  405: "ANNAL_METHOD_NOT_ALLOWED",
  406: "ANNAL_NOT_ACCEPTABLE",
  408: "ANNAL_REQUEST_TIMEOUT",
  409: "ANNAL_CONFLICT",
  413: "ANNAL_BODY_TOO_LARGE",
  414: "ANNAL_URI_TOO_LONG",
  415: "ANNAL_UNSUPPORTED_MEDIA_TYPE",
  431: "ANNAL_HEADERS_TOO_LARGE",
  429: "ANNAL_RATE_LIMITED",
};

/** The catalog code of a client error's status, when annal has one (`ANNAL_FORBIDDEN` for 403). */
export function clientErrorCode(status: number): ErrorCode | undefined {
  return CLIENT_ERROR_CODES[status];
}

/**
 * Classifies any thrown value: an `AnnalError` by its own code, status, message, hint,
 * details and headers; a client error from Fastify or a plugin (a `statusCode` 4xx) by a
 * stable code of ours; anything else as `ANNAL_INTERNAL`, a 500 whose message names the
 * request id and nothing of the error.
 *
 * @example
 * const c = classifyError(error, request.id);
 * if (c.internal) request.log.error({ err: error }, "request failed");
 * reply.code(c.status).headers(c.headers).send(problemOf(c, request.id));
 */
export function classifyError(error: unknown, requestId: string): ClassifiedError {
  // A connection refused or broken under a statement is PostgreSQL's absence (a restart), not
  // annal's fault: a 503 to retry, logged once by the pool rather than with a stack each time.
  if (!isAnnalError(error) && isDatabaseUnreachable(error)) {
    return classifyError(new DatabaseUnreachableError(reasonOf(error), error), requestId);
  }
  if (isAnnalError(error)) {
    const graphqlCode = graphqlCodeOf(error.kind, error.status);
    return {
      code: error.code,
      kind: error.kind,
      status: error.status,
      message: error.message,
      hint: error.hint,
      details: error.details,
      headers: error.headers,
      graphqlCode,
      internal: error.status >= 500 && !PASSING_CONDITIONS.has(error.kind),
    };
  }
  const status = clientErrorStatus(error);
  if (status !== undefined) {
    const { code: frameworkCode, message } = error as { code?: unknown; message?: unknown };
    const known = typeof frameworkCode === "string" ? FRAMEWORK_ERRORS[frameworkCode] : undefined;
    const code = known?.code ?? CLIENT_ERROR_CODES[status] ?? "ANNAL_BAD_REQUEST";
    const entry = catalogEntry(code);
    return {
      code,
      kind: code,
      status,
      message:
        known?.message ??
        (typeof message === "string" && message !== "" ? message : (STATUS_CODES[status] ?? code)),
      hint: known?.hint ?? entry?.hint,
      details: {},
      headers: {},
      graphqlCode: graphqlCodeOf(code, status),
      internal: false,
    };
  }
  return {
    code: "ANNAL_INTERNAL",
    kind: "ANNAL_INTERNAL",
    status: 500,
    message: `annal met an unexpected error; the server log has the details under request ${requestId}`,
    hint: undefined,
    details: { requestId },
    headers: {},
    graphqlCode: GRAPHQL_CODES.internal,
    internal: true,
  };
}

/**
 * GraphQL's `extensions.code` for a catalog code: the catalog's own where it names one (the
 * spec's workflow refusals keep their code), else the category of the status.
 */
function graphqlCodeOf(code: ErrorCode, status: number): string {
  const own = catalogEntry(code)?.graphql;
  if (own !== undefined) return own;
  if (status === 401) return GRAPHQL_CODES.unauthenticated;
  if (status === 403) return GRAPHQL_CODES.forbidden;
  if (status === 404) return GRAPHQL_CODES.notFound;
  if (status === 409) return GRAPHQL_CODES.conflict;
  if (status >= 400 && status < 500) return GRAPHQL_CODES.badUserInput;
  if (status === 502 || status === 503 || status === 504) return GRAPHQL_CODES.unavailable;
  return GRAPHQL_CODES.internal;
}

function clientErrorStatus(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { statusCode } = error as { statusCode?: unknown };
  return typeof statusCode === "number" && statusCode >= 400 && statusCode < 500
    ? statusCode
    : undefined;
}

function reasonOf(error: unknown): string {
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === "string" && message !== "" ? message : "the connection failed";
  return typeof code === "string" ? `${text} (${code})` : text;
}
