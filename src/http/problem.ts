import { STATUS_CODES } from "node:http";
import { isAnnalError } from "../errors.ts";

export const PROBLEM_CONTENT_TYPE = "application/problem+json; charset=utf-8";

/**
 * An RFC 9457 problem details body. `type` is a URN named for the code (stable, not meant
 * to be dereferenced); `title` is the status's reason phrase; `code` and `hint` are annal's
 * extension members, the same as the CLI prints.
 */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: string;
  readonly hint?: string;
  /** Set on 500s: the request id under which the log has the details. */
  readonly requestId?: string;
}

export function problem(
  status: number,
  code: string,
  detail: string,
  extra: { hint?: string | undefined; requestId?: string } = {},
): Problem {
  return {
    type: `urn:annal:problem:${code}`,
    title: STATUS_CODES[status] ?? "Error",
    status,
    detail,
    code,
    ...(extra.hint === undefined ? {} : { hint: extra.hint }),
    ...(extra.requestId === undefined ? {} : { requestId: extra.requestId }),
  };
}

/** The problem for a request no route matches. */
export function notFound(method: string, url: string): Problem {
  const path = url.split("?")[0] ?? url; // the query may carry tokens: never echo it
  return problem(404, "ANNAL_NOT_FOUND", `no route for ${method} ${path}`, {
    hint: "check the method and the path; GET /healthz, /readyz and /metrics always exist",
  });
}

/**
 * Fastify's own client errors, by their code: each gets a stable annal code and a detail of
 * ours (some of Fastify's messages echo the request, e.g. a bad URL component).
 */
const FRAMEWORK_ERRORS: Readonly<Record<string, { code: string; detail?: string; hint?: string }>> =
  {
    FST_ERR_CTP_INVALID_JSON_BODY: {
      code: "ANNAL_BAD_REQUEST",
      detail: "the request body is not valid JSON",
      hint: "send a JSON document, or a Content-Type that matches the body",
    },
    FST_ERR_CTP_EMPTY_JSON_BODY: {
      code: "ANNAL_BAD_REQUEST",
      detail: "the request body is empty but its Content-Type is application/json",
      hint: "send a JSON document, or no Content-Type header",
    },
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: {
      code: "ANNAL_BAD_REQUEST",
      detail: "the request body's size does not match its Content-Length",
    },
    FST_ERR_CTP_BODY_TOO_LARGE: {
      code: "ANNAL_BODY_TOO_LARGE",
      detail: "the request body is larger than this route accepts",
      hint: "send a smaller body, or split the request",
    },
    FST_ERR_CTP_INVALID_MEDIA_TYPE: {
      code: "ANNAL_UNSUPPORTED_MEDIA_TYPE",
      detail: "this route does not accept the request's Content-Type",
      hint: "send application/json",
    },
    FST_ERR_BAD_URL: { code: "ANNAL_BAD_REQUEST", detail: "the request URL is not valid" },
    FST_ERR_INVALID_URL: { code: "ANNAL_BAD_REQUEST", detail: "the request URL is not valid" },
    FST_ERR_MAX_PARAM_LENGTH: {
      code: "ANNAL_URI_TOO_LONG",
      detail: "a path parameter is longer than annal accepts",
    },
    // Fastify's schema-validation messages name the field and the rule, never the value.
    FST_ERR_VALIDATION: { code: "ANNAL_BAD_REQUEST" },
  };

/** Codes for any other 4xx an HTTP library raises, by status. */
const CLIENT_ERROR_CODES: Readonly<Record<number, string>> = {
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
  429: "ANNAL_RATE_LIMITED",
};

export interface MappedError {
  readonly problem: Problem;
  /** Our fault: log it with its stack; the body says nothing of it. */
  readonly internal: boolean;
}

/**
 * The one mapping from a thrown error to a response: an `AnnalError` answers with its own
 * status, code, message and hint; a client error from Fastify or a plugin with a stable
 * code; anything else with a 500 `ANNAL_INTERNAL` that names the request id and nothing more.
 */
export function mapError(error: unknown, requestId: string): MappedError {
  if (isAnnalError(error)) {
    return {
      problem: problem(error.status, error.code, error.message, { hint: error.hint }),
      internal: error.status >= 500,
    };
  }
  const status = clientErrorStatus(error);
  if (status !== undefined) {
    const { code: frameworkCode, message } = error as { code?: unknown; message?: unknown };
    const known = typeof frameworkCode === "string" ? FRAMEWORK_ERRORS[frameworkCode] : undefined;
    const code = known?.code ?? CLIENT_ERROR_CODES[status] ?? "ANNAL_BAD_REQUEST";
    const detail =
      known?.detail ??
      (typeof message === "string" && message !== "" ? message : (STATUS_CODES[status] ?? code));
    return { problem: problem(status, code, detail, { hint: known?.hint }), internal: false };
  }
  return {
    problem: problem(
      500,
      "ANNAL_INTERNAL",
      `annal met an unexpected error; the server log has the details under request ${requestId}`,
      { requestId },
    ),
    internal: true,
  };
}

function clientErrorStatus(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { statusCode } = error as { statusCode?: unknown };
  return typeof statusCode === "number" && statusCode >= 400 && statusCode < 500
    ? statusCode
    : undefined;
}
