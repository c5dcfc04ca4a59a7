/**
 * Accounts and access: service accounts with bearer tokens, people's accounts with sign-in
 * (OpenID Connect, an LDAP bind) and the `service_session` cookie, principals, the Access
 * Configuration, and the one authentication factory every channel uses.
 */
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
  callerOf,
  createAuthentication,
  type Authentication,
  type AuthenticationOptions,
  type CredentialRequest,
} from "./authentication.ts";
export {
  accessNotActive,
  assertAccess,
  assertAuthority,
  principalLimitError,
  buildCaller,
  hasAccess,
  normalizePrincipal,
  type AccountRef,
  type ActiveGrants,
  type Caller,
  type Role,
} from "./caller.ts";
export {
  activateAccessConfiguration,
  normalizeGrants,
  readActiveGrants,
  type Activation,
} from "./access-configuration.ts";
export { directoryGroupsOf, isActiveDirectory } from "./directory-groups.ts";
export type { PeopleOptions, PrincipalSource } from "./session-caller.ts";
export {
  SESSION_COOKIE,
  endSession,
  sessionCookieOf,
  listSessions,
  revokeSession,
  type SessionListing,
  type SessionPolicy,
} from "./sessions.ts";
export type { FoundPrincipals, PersonAccount, PersonIdentity } from "./persons.ts";
export { directoryOrigin, type DirectoryOrigin } from "./sign-in/ldap.ts";
export { oidcOrigin, type OidcOrigin } from "./sign-in/oidc.ts";
export { signInRoutes, type ErrorReading, type SignInRoutesOptions } from "./sign-in/routes.ts";
export { accessAt, type AccessReport, type AccountAccess } from "./access-history.ts";
export { completeSignIn } from "./sign-in/complete.ts";
