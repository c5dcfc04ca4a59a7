import { STATUS_CODES } from "node:http";
import {
  AnnalError,
  classifyError,
  clientErrorCode,
  PROBLEM_CONTENT_TYPE,
  problemOf,
  type ClassifiedError,
} from "../errors/index.ts";
import type { Logger } from "../logger.ts";

/** Hono's HTTPException, also of another copy of Hono: a status, a message, maybe a response. */
interface HttpExceptionLike extends Error {
  readonly status: number;
  readonly res?: Response;
  getResponse(): Response;
}

function isHttpException(error: unknown): error is HttpExceptionLike {
  return (
    error instanceof Error &&
    typeof (error as { getResponse?: unknown }).getResponse === "function" &&
    typeof (error as { status?: unknown }).status === "number"
  );
}

/**
 * The answer to an error a handler threw, as problem+json:
 * - an `HTTPException` answers its status and message (the status's code of annal's catalog,
 *   `ANNAL_FORBIDDEN` for a 403, ...; `ANNAL_ENDPOINT_HTTP_EXCEPTION` for a status without
 *   one, a 418 or a 5xx), and its `cause` when that is a plain JSON value (an `Error` as
 *   cause is logged, not answered: it may hold internals). One made with its own `res`
 *   answers that response.
 * - an `AnnalError` (a binding's refusal, `vValidator`'s 400) answers its code and status;
 * - anything else is logged with its stack under the request id and answers a 500
 *   `ANNAL_INTERNAL` whose body names only the request id.
 */
export function endpointErrorResponse(error: unknown, requestId: string, log: Logger): Response {
  let classified: ClassifiedError;
  let cause: unknown;
  if (isHttpException(error)) {
    if (error.res) return error.getResponse();
    const message = error.message || (STATUS_CODES[error.status] ?? "Error");
    // A 4xx annal has a code for takes it (403: ANNAL_FORBIDDEN); any other status keeps
    // itself under the code for such exceptions (a 418 is no ANNAL_BAD_REQUEST).
    classified =
      clientErrorCode(error.status) !== undefined
        ? classifyError({ statusCode: error.status, message }, requestId)
        : classifyError(
            new AnnalError("ANNAL_ENDPOINT_HTTP_EXCEPTION", message, { status: error.status }),
            requestId,
          );
    // The thrower chose the message: a 5xx of theirs is answered with it, not hidden.
    classified = { ...classified, internal: false };
    cause = plainCause(error.cause);
    if (error.cause instanceof Error) {
      log.warn({ err: error.cause, status: error.status }, "endpoint refused the request");
    } else {
      log.info({ status: error.status, code: classified.code }, classified.message);
    }
  } else {
    classified = classifyError(error, requestId);
    if (classified.status >= 500) {
      log.error({ err: error, requestId }, "endpoint failed");
      // Our words, whatever the error said: a 5xx's text may hold internals.
      classified = {
        ...classified,
        message: `the endpoint failed; the server log has the details under request ${requestId}`,
        details: { requestId },
      };
    } else {
      log.info({ code: classified.code, status: classified.status }, classified.message);
    }
  }
  const body = {
    ...problemOf(classified),
    ...(cause === undefined ? {} : { cause }),
  };
  return new Response(JSON.stringify(body), {
    status: classified.status,
    headers: { ...classified.headers, "content-type": PROBLEM_CONTENT_TYPE },
  });
}

/** A cause that can be answered: a JSON value that is not an error. */
function plainCause(cause: unknown): unknown {
  if (cause === undefined || cause === null || cause instanceof Error) return undefined;
  if (["string", "number", "boolean"].includes(typeof cause)) return cause;
  if (typeof cause !== "object") return undefined;
  try {
    return JSON.parse(JSON.stringify(cause)) as unknown;
  } catch {
    return undefined;
  }
}
