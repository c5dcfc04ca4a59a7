import { AnnalError, isDatabaseUnreachable } from "../errors/index.ts";

/**
 * No pooled connection came free within `[database] connectionTimeout`: every connection is in
 * use. A 503 with `Retry-After`; the caller sends again shortly.
 */
export class DatabaseBusyError extends AnnalError {
  /** How long the caller waited, in milliseconds. */
  readonly waitedMs: number;
  readonly poolSize: number;

  constructor(waitedMs: number, poolSize: number, cause?: unknown) {
    super(
      "ANNAL_DATABASE_BUSY",
      `every one of the ${poolSize} database connections stayed in use for ${waitedMs} ms; the request was not served`,
      { cause, headers: { "retry-after": "1" } },
    );
    this.waitedMs = waitedMs;
    this.poolSize = poolSize;
  }
}

export { DatabaseUnreachableError, isDatabaseUnreachable } from "../errors/index.ts";
/**
 * Logs a failure of a background loop (a projector batch, a jobs poll, a timer pass): at
 * `error` with its stack, unless it is the database's absence, which the pool logs once for the
 * whole outage (`onAvailability`): then at `debug` only, so that a PostgreSQL restart is one
 * line in the log, not one stack a loop a second.
 */
export function logLoopFailure(
  log: {
    error(fields: object, message: string): void;
    debug?(fields: object, message: string): void;
  },
  error: unknown,
  fields: Record<string, unknown>,
  message: string,
): void {
  if (isDatabaseUnreachable(error)) log.debug?.({ ...fields, err: error }, message);
  else log.error({ ...fields, err: error }, message);
}
