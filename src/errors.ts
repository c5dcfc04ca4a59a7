/**
 * Every error a user can meet is an `AnnalError`: a stable `code`, a message that says what
 * happened, and, where it helps, a `hint` that says what to do. The HTTP layer maps `status`
 * to the response; the CLI prints `annal: <code>: <message>` and `annal: hint: <hint>`.
 *
 * A condition that callers need to tell apart gets its own subclass carrying its context in
 * readonly fields (see `WrongExpectedVersionError` in the event store).
 */
export class AnnalError extends Error {
  readonly code: string;
  readonly hint: string | undefined;
  /** HTTP status when this error answers a request; 4xx for bad input, 5xx for our faults. */
  readonly status: number;
  /**
   * Response headers that belong to this error wherever it is answered (`WWW-Authenticate`
   * on a 401, `Retry-After` on a 429 or 503), so that every surface sends them.
   */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: string,
    message: string,
    options: {
      hint?: string;
      status?: number;
      cause?: unknown;
      headers?: Readonly<Record<string, string>>;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.hint = options.hint;
    this.status = options.status ?? 500;
    this.headers = options.headers ?? {};
  }
}

/** The response headers an error carries (none for an error that is not annal's). */
export function errorHeaders(error: unknown): Readonly<Record<string, string>> {
  return error instanceof AnnalError ? error.headers : {};
}

export function isAnnalError(error: unknown): error is AnnalError {
  return error instanceof AnnalError;
}
