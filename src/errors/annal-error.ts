import { ERROR_CATALOG, type ErrorCode } from "./codes/index.ts";

export interface AnnalErrorOptions {
  /** What to do about it; default: the catalog's hint for the code, if it has one. */
  readonly hint?: string;
  /** HTTP status when this error answers a request; default: the catalog's for the code. */
  readonly status?: number;
  readonly cause?: unknown;
  /**
   * Response headers that belong to this error wherever it is answered (`WWW-Authenticate`
   * on a 401, `Retry-After` on a 429 or 503), so that every surface sends them.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Members that locate the fault, beyond code, message and hint: the parameter at fault,
   * what was expected, the unknown names. REST answers them as problem-details extension
   * members, GraphQL in `extensions`. Only what the client sent or may know; never a secret.
   */
  readonly details?: Readonly<Record<string, unknown>>;
  /**
   * A code of the user's own (a hooks provider's `PermanentFailure`, a workflow's error):
   * the error then shows it as its `code`, and `kind` keeps the catalog code it is a case of.
   */
  readonly userCode?: string;
}

/**
 * Every error a user can meet is an `AnnalError`: a stable `code` from the catalog
 * (`ERROR_CATALOG`), a message that says what happened, and, where it helps, a `hint` that
 * says what to do. One classifier (`errors/classify.ts`) turns it into what each surface
 * answers: problem+json for REST, `{ "error": … }` for the webhook, `extensions.code` for
 * GraphQL; the CLI prints `annal: <code>: <message>` and `annal: hint: <hint>`.
 *
 * A condition that callers need to tell apart gets its own subclass carrying its context in
 * readonly fields (see `WrongExpectedVersionError` in the event store).
 *
 * @example
 * throw new AnnalError("ANNAL_EXPORT_BUSY", "too many exports are streaming", {
 *   headers: { "retry-after": "5" },
 * });
 */
export class AnnalError extends Error {
  /** The code the user sees: the catalog code, or the user's own (`userCode`). */
  readonly code: string;
  /** The catalog code this error is a case of (the same as `code` unless a user code). */
  readonly kind: ErrorCode;
  readonly hint: string | undefined;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, options: AnnalErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    const entry = ERROR_CATALOG[code];
    this.name = new.target.name;
    this.code = options.userCode ?? code;
    this.kind = code;
    this.hint = options.hint ?? ("hint" in entry ? entry.hint : undefined);
    this.status = options.status ?? entry.status;
    this.headers = options.headers ?? {};
    this.details = options.details ?? {};
  }
}

/**
 * The same error with more members that locate it (`{ parameter: "id" }`), for a caller that
 * knows where the failing value came from; any other value is returned as it is.
 *
 * @example
 * const uuid = await entryUUIDForDn(pool, id).catch((error) => { throw locate(error, { parameter: "id" }); });
 */
export function locate(error: unknown, details: Readonly<Record<string, unknown>>): unknown {
  if (!(error instanceof AnnalError)) return error;
  return new AnnalError(error.kind, error.message, {
    hint: error.hint,
    status: error.status,
    cause: error.cause,
    headers: error.headers,
    details: { ...details, ...error.details },
    ...(error.code === error.kind ? {} : { userCode: error.code }),
  });
}

/** The response headers an error carries (none for an error that is not annal's). */
export function errorHeaders(error: unknown): Readonly<Record<string, string>> {
  return error instanceof AnnalError ? error.headers : {};
}

export function isAnnalError(error: unknown): error is AnnalError {
  return error instanceof AnnalError;
}
