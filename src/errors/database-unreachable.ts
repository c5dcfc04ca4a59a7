import { AnnalError } from "./annal-error.ts";

/** Seconds a client should wait before asking again while the database does not answer. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * The database does not answer: it refuses connections, is shutting down or starting up, or
 * a connection broke under a statement. A 503 with `Retry-After` (and GraphQL's
 * `extensions.code`); annal's connections come back on their own once PostgreSQL does.
 */
export class DatabaseUnreachableError extends AnnalError {
  constructor(reason: string, cause?: unknown) {
    super("ANNAL_DATABASE_UNREACHABLE", `the database is unreachable: ${reason}`, {
      status: 503,
      hint: "check that PostgreSQL runs and that DATABASE_URL (or database.url) names it with the right user and password",
      cause,
      headers: { "retry-after": String(DATABASE_RETRY_AFTER_SECONDS) },
    });
  }
}

/** SQLSTATEs of a server going away or not there yet: admin/crash shutdown, cannot connect now, connection exceptions. */
const UNREACHABLE_SQLSTATES = new Set([
  "57P01",
  "57P02",
  "57P03",
  "08000",
  "08001",
  "08003",
  "08004",
  "08006",
]);
/** Node's socket errors for a server that is not (or no longer) there. */
const UNREACHABLE_ERRNOS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);
/** pg's own messages for a connection that ended under it (they carry no code). */
const UNREACHABLE_MESSAGES = [
  "Connection terminated",
  "Client has encountered a connection error and is not queryable",
  "Client was closed and is not queryable",
  "Connection terminated unexpectedly",
];

/**
 * Whether `error` (or one of its causes, or of an AggregateError's errors) says that the
 * database is not reachable, as opposed to a statement that failed: a refused or broken
 * connection, or a server shutting down or starting. Such a failure is the database's
 * absence, not annal's fault, and is answered as `DatabaseUnreachableError`.
 */
export function isDatabaseUnreachable(error: unknown, depth = 0): boolean {
  if (depth > 5 || typeof error !== "object" || error === null) return false;
  if (error instanceof DatabaseUnreachableError) return true;
  const { code, message, cause, errors } = error as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (
    typeof code === "string" &&
    (UNREACHABLE_SQLSTATES.has(code) || UNREACHABLE_ERRNOS.has(code))
  ) {
    return true;
  }
  // A Unix socket that is not there: its server is stopped (it removes the socket).
  if (code === "ENOENT" && (error as { syscall?: unknown }).syscall === "connect") return true;
  if (typeof message === "string" && UNREACHABLE_MESSAGES.some((m) => message.startsWith(m))) {
    return true;
  }
  if (Array.isArray(errors) && errors.some((each) => isDatabaseUnreachable(each, depth + 1))) {
    return true;
  }
  return cause !== undefined && isDatabaseUnreachable(cause, depth + 1);
}
