/**
 * annal's errors: `AnnalError` and the catalog of every code it can carry, with its status,
 * its meaning and a hint. Rendering for each surface is `http/classify.ts`'s.
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
