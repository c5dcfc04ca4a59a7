export { accessOf, changeAccess, type AccessChange } from "./access.ts";
export {
  ACCESS_FUNCTIONS,
  ACCESS_MEANINGS,
  authenticateBearer,
  createToken,
  listAccounts,
  parseAccess,
  revokeAccount,
} from "./accounts.ts";
export type { AccessFunction, AccountListing, ServiceAccount } from "./accounts.ts";
export { ForbiddenError, UnauthenticatedError } from "./errors.ts";
export {
  assertAccess,
  callerOf,
  createAuthentication,
  hasAccess,
  type Authentication,
  type AuthenticationOptions,
  type Caller,
} from "./authentication.ts";
