import { AnnalError } from "../errors/index.ts";

/** Why a request is not authenticated. */
export type UnauthenticatedReason =
  "missing" | "invalid" | "session-invalid" | "session-expired" | "session-ended";

const UNAUTHENTICATED_MESSAGES: Readonly<Record<UnauthenticatedReason, string>> = {
  missing: "this resource needs a bearer token or a session (sign in at /auth/login)",
  invalid: "the bearer token is not valid (unknown, revoked, or malformed)",
  "session-invalid": "the session cookie is not valid (unknown or malformed)",
  "session-expired": "the session has expired",
  "session-ended": "the session has ended (signed out, or revoked)",
};

/** No credentials, or credentials that name no active account or session: HTTP 401. */
export class UnauthenticatedError extends AnnalError {
  /** For the `WWW-Authenticate` response header (RFC 6750). */
  readonly challenge: string;
  readonly reason: UnauthenticatedReason;

  constructor(reason: UnauthenticatedReason) {
    const challenge =
      reason === "invalid" ? 'Bearer realm="annal", error="invalid_token"' : 'Bearer realm="annal"';
    super("ANNAL_UNAUTHENTICATED", UNAUTHENTICATED_MESSAGES[reason], {
      status: 401,
      hint: reason.startsWith("session")
        ? "sign in again at /auth/login"
        : "sign in at /auth/login, or create a token with `annal token create --name <n> --access read`",
      headers: { "www-authenticate": challenge },
    });
    this.challenge = challenge;
    this.reason = reason;
  }
}

/** The account is known but lacks the access function the action needs: HTTP 403. */
export class ForbiddenError extends AnnalError {
  readonly needed: string;

  /**
   * `account`: a service account's name (or the account), for a hint the operator can run
   * as it is; a person's access comes from the Access Configuration instead.
   */
  constructor(
    needed: string,
    account?:
      string | { readonly kind: "service" | "person"; readonly name: string; readonly id: string },
  ) {
    const person = typeof account === "object" && account.kind === "person";
    const name = typeof account === "object" ? account.name : account;
    super("ANNAL_FORBIDDEN", `this needs the access function "${needed}"`, {
      status: 403,
      hint: person
        ? `grant it to one of the account's principals (a group, account:${(account as { id: string }).id}) in [authorization.grants], then raise [authorization.activate] version`
        : // Adds the one function; the account keeps the access it has.
          `grant it: annal token access ${name ?? "<name>"} --add ${needed}`,
    });
    this.needed = needed;
  }
}

/** No active service account has this name: `ANNAL_ACCOUNT_NOT_FOUND` (404). */
export function accountNotFound(name: string): AnnalError {
  return new AnnalError("ANNAL_ACCOUNT_NOT_FOUND", `no active service account named "${name}"`, {
    status: 404,
    hint: "`annal token list` shows the accounts",
  });
}
