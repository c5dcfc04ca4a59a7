import type { ErrorCodeSpec } from "./spec.ts";

/** Requests any channel may meet, and annal's own faults. */
export const HTTP_CODES = {
  ANNAL_INTERNAL: {
    status: 500,
    meaning:
      "annal met an unexpected error (a bug); the answer names the request id under which the log has the details.",
    hint: "this is a bug in annal; report it with the request id",
    surfaces: ["readyz"],
  },
  ANNAL_WEB_ASSETS_UNAVAILABLE: {
    status: 500,
    meaning:
      "The web application's assets (`src/web/client`, bundled by esbuild when first asked for) could not be built, so `/app` cannot be served.",
    hint: "the log names the esbuild error; reinstall the package (npm ci) if its files are damaged",
  },
  ANNAL_BAD_REQUEST: {
    status: 400,
    meaning: "The request is malformed (its URL, its body, or its Content-Length).",
    surfaces: ["rest"],
  },
  ANNAL_NOT_FOUND: { status: 404, meaning: "No such route.", surfaces: ["rest"] },
  ANNAL_METHOD_NOT_ALLOWED: { status: 405, meaning: "The route does not take this method." },
  ANNAL_NOT_ACCEPTABLE: {
    status: 406,
    meaning: "The route cannot answer in any type the `Accept` header allows.",
    surfaces: ["rest"],
  },
  ANNAL_REQUEST_TIMEOUT: { status: 408, meaning: "The request took too long to arrive." },
  ANNAL_CONFLICT: { status: 409, meaning: "The request conflicts with the resource's state." },
  ANNAL_BODY_TOO_LARGE: {
    status: 413,
    meaning: "The request body is larger than this route accepts.",
    hint: "send a smaller body, or split the request",
  },
  ANNAL_URI_TOO_LONG: {
    status: 414,
    meaning: "The URL (its path and query string) is longer than annal accepts: 16,384 characters.",
    hint: "shorten the query: fewer fields, a shorter filter, or split the request",
    surfaces: ["rest"],
  },
  ANNAL_HEADERS_TOO_LARGE: {
    status: 431,
    meaning: "The request's header fields together are larger than annal accepts.",
    hint: "send fewer or smaller headers (large cookies are the usual cause)",
    surfaces: ["rest"],
  },
  ANNAL_UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    meaning: "The route does not accept the request's Content-Type.",
    hint: "send application/json",
  },
  ANNAL_RATE_LIMITED: {
    status: 429,
    meaning: "Too many requests; wait the seconds in `Retry-After`, then send again.",
  },
  ANNAL_UNAUTHENTICATED: {
    status: 401,
    meaning: "No credentials, or credentials that name no active account (see `WWW-Authenticate`).",
    graphql: "UNAUTHENTICATED",
    surfaces: ["rest"],
  },
  ANNAL_FORBIDDEN: {
    status: 403,
    meaning: "The account lacks the access function the action needs.",
    surfaces: ["rest"],
  },
  ANNAL_DATABASE_UNREACHABLE: {
    status: 503,
    meaning:
      "The database does not answer (it refuses connections, is restarting, or a connection broke under the request); send it again after `Retry-After` seconds.",
    hint: "check that PostgreSQL runs and that DATABASE_URL (or database.url) names it with the right user and password",
    graphql: "ANNAL_DATABASE_UNREACHABLE",
    surfaces: ["rest", "readyz"],
  },
  ANNAL_DATABASE_BUSY: {
    status: 503,
    meaning:
      "Every database connection stayed in use for `[database] connectionTimeout`, so the request was not served; send it again after `Retry-After` seconds.",
    hint: "retry shortly; if it persists, raise [database] poolSize (and the server's max_connections) or lower [workflows] concurrency",
    graphql: "ANNAL_DATABASE_BUSY",
    surfaces: ["rest"],
  },
  ANNAL_MIGRATIONS_PENDING: {
    status: 503,
    meaning: "The database lacks migrations this program needs; annal start applies them.",
    surfaces: ["readyz"],
  },
  ANNAL_READINESS_TIMEOUT: {
    status: 503,
    meaning: "A readiness check did not finish in time.",
    surfaces: ["readyz"],
  },
  ANNAL_PROJECTION_TIMEOUT: {
    status: 503,
    meaning: "A projection did not reach the requested position in time (read-your-writes).",
    hint: "retry shortly; GET /readyz shows each projection's lag",
  },
  ANNAL_REPLAY_IN_PROGRESS: {
    status: 409,
    meaning: "The projection is already being rebuilt by another process.",
    hint: "wait for that rebuild to finish",
  },
  ANNAL_WRONG_EXPECTED_VERSION: {
    status: 409,
    meaning:
      "An append stated a stream version that is no longer the stream's (a concurrent write).",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
