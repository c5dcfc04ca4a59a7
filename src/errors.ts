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

  constructor(
    code: string,
    message: string,
    options: { hint?: string; status?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.hint = options.hint;
    this.status = options.status ?? 500;
  }
}

export function isAnnalError(error: unknown): error is AnnalError {
  return error instanceof AnnalError;
}
