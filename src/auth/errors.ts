import { AnnalError } from "../errors/index.ts";

/** No credentials, or credentials that name no active account: HTTP 401. */
export class UnauthenticatedError extends AnnalError {
  /** For the `WWW-Authenticate` response header (RFC 6750). */
  readonly challenge: string;

  constructor(reason: "missing" | "invalid") {
    const challenge =
      reason === "missing" ? 'Bearer realm="annal"' : 'Bearer realm="annal", error="invalid_token"';
    super(
      "ANNAL_UNAUTHENTICATED",
      reason === "missing"
        ? "this resource needs a bearer token"
        : "the bearer token is not valid (unknown, revoked, or malformed)",
      {
        status: 401,
        hint: "create one with `annal token create --name <n> --access read`",
        headers: { "www-authenticate": challenge },
      },
    );
    this.challenge = challenge;
  }
}

/** The account is known but lacks the access function the action needs: HTTP 403. */
export class ForbiddenError extends AnnalError {
  readonly needed: string;

  /** `account`: the account's name, for a hint the operator can run as it is. */
  constructor(needed: string, account?: string) {
    super("ANNAL_FORBIDDEN", `this needs the access function "${needed}"`, {
      status: 403,
      // Adds the one function; the account keeps the access it has.
      hint: `grant it: annal token access ${account ?? "<name>"} --add ${needed}`,
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
