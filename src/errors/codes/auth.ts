import type { ErrorCodeSpec } from "./spec.ts";

/** People's accounts: sign-in, sessions, principals and the Access Configuration. */
export const AUTH_CODES = {
  ANNAL_ACCESS_NOT_ACTIVE: {
    status: 403,
    meaning:
      "No Access Configuration is active, so all configurable access is denied (a service account keeps its tokens' access).",
    hint: "grant access in [authorization.grants] and activate it with an [authorization.activate] block (version, by), then restart annal",
    surfaces: ["rest"],
  },
  ANNAL_ACCESS_VERSION_CHANGED: {
    status: 500,
    meaning:
      "The Access Configuration's grants changed while its version stayed the one already activated.",
    hint: "raise [authorization.activate] version",
    surfaces: ["startup"],
  },
  AUTHORIZATION_PRINCIPAL_LIMIT_EXCEEDED: {
    status: 403,
    meaning:
      "The account's identity provider gave more principals than the ceiling (`[auth] maxPrincipals`); the account's reads and commands fail.",
    hint: "reduce the account's group memberships, or raise [auth] maxPrincipals",
    graphql: "AUTHORIZATION_PRINCIPAL_LIMIT_EXCEEDED",
    surfaces: ["rest"],
  },
  WF_AUTHORIZATION_DENIED: {
    status: 403,
    meaning:
      "The authority of the acting account could not be confirmed: its identity provider could not be reached and its principals are older than the refresh interval.",
    hint: "retry once the identity provider answers again, or sign in anew",
    graphql: "WF_AUTHORIZATION_DENIED",
  },
  ANNAL_ACCOUNT_NO_DN: {
    status: 403,
    meaning:
      "The account has no entry in the directory, so annal cannot make a directory write as it.",
    hint: "sign in with an account the directory knows (configure [auth.oidc] personFilter for an OpenID origin)",
  },
  ANNAL_SIGN_IN_FAILED: {
    status: 401,
    meaning:
      "Sign-in failed: a wrong login or password, or an answer of the identity provider that annal cannot accept.",
  },
  ANNAL_SIGN_IN_STATE_INVALID: {
    status: 400,
    meaning:
      "The sign-in's `state` is unknown, used already, expired, or not this browser's: a forged, replayed or stale sign-in.",
    hint: "start again at /auth/login",
  },
  ANNAL_SIGN_IN_NOT_CONFIGURED: {
    status: 404,
    meaning: "This way of signing in is not configured ([auth.oidc] or [auth.ldap]).",
  },
  ANNAL_SIGN_IN_UNAVAILABLE: {
    status: 503,
    meaning: "The identity provider or the directory could not be reached to sign in.",
    hint: "retry in a moment",
  },
  ANNAL_SIGN_IN_RATE_LIMITED: {
    status: 429,
    meaning:
      "Too many sign-in attempts for this account or from this address; wait the seconds in `Retry-After`.",
  },
  ANNAL_CSRF_REJECTED: {
    status: 403,
    meaning:
      "A state-changing request authenticated by the session cookie came from another origin (its Origin or Referer), or GraphQL was posted as something other than application/json.",
    hint: "send the request from annal's own pages, or use a bearer token",
    surfaces: ["rest"],
  },
  ANNAL_SESSION_NOT_FOUND: {
    status: 404,
    meaning: "No active session has this id.",
    hint: "`annal sessions list` shows the active sessions",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
