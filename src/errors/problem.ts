import { STATUS_CODES } from "node:http";
import { AnnalError } from "./annal-error.ts";
import type { ClassifiedError } from "./classify.ts";

export const PROBLEM_CONTENT_TYPE = "application/problem+json; charset=utf-8";

/**
 * An RFC 9457 problem details body. `type` is a URN named for the code (stable, not meant
 * to be dereferenced); `title` is the status's reason phrase; `code` and `hint` are annal's
 * extension members, the same as the CLI prints; the error's details are further extension
 * members (they never replace a member RFC 9457 defines).
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
  readonly [extension: string]: unknown;
}

/** The problem body of a classified error. */
export function problemOf(error: ClassifiedError): Problem {
  return {
    // Extension members first, so that none can replace a member RFC 9457 defines.
    ...error.details,
    type: `urn:annal:problem:${error.code}`,
    title: STATUS_CODES[error.status] ?? "Error",
    status: error.status,
    detail: error.message,
    code: error.code,
    ...(error.hint === undefined ? {} : { hint: error.hint }),
  };
}

/** The error for a request no route matches. */
export function routeNotFound(method: string, url: string): AnnalError {
  const path = url.split("?")[0] ?? url; // the query may carry tokens: never echo it
  return new AnnalError("ANNAL_NOT_FOUND", `no route for ${method} ${path}`, {
    hint: "check the method and the path; GET /healthz, /readyz and /metrics always exist",
  });
}
