export {
  ACCESS_FUNCTIONS,
  authenticateBearer,
  createToken,
  listAccounts,
  parseAccess,
  revokeAccount,
} from "./accounts.ts";
export type { AccessFunction, AccountListing, ServiceAccount } from "./accounts.ts";
export { ForbiddenError, UnauthenticatedError } from "./errors.ts";
