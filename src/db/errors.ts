import { AnnalError } from "../errors/index.ts";

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

export { DatabaseUnreachableError, isDatabaseUnreachable } from "../errors/database-unreachable.ts";
