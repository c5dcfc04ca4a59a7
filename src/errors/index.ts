/**
 * annal's errors: `AnnalError` and the catalog of every code it can carry, with its status,
 * its meaning and a hint; the one classifier (`classify.ts`) every surface renders an error from,
 * and the problem+json body (`problem.ts`) the HTTP surfaces answer with.
 */
export {
  AnnalError,
  errorHeaders,
  isAnnalError,
  locate,
  type AnnalErrorOptions,
} from "./annal-error.ts";
export {
  ERROR_CATALOG,
  catalogEntry,
  isErrorCode,
  type ErrorCode,
  type ErrorCodeSpec,
  type ErrorSurface,
} from "./codes/index.ts";
export { GRAPHQL_CODES, type GraphqlCode } from "./graphql-codes.ts";
export { errorReference } from "./reference.ts";
export { classifyError, clientErrorCode, type ClassifiedError } from "./classify.ts";
export { problemOf, PROBLEM_CONTENT_TYPE, routeNotFound, type Problem } from "./problem.ts";
export {
  DATABASE_RETRY_AFTER_SECONDS,
  DatabaseUnreachableError,
  isDatabaseUnreachable,
} from "./database-unreachable.ts";
