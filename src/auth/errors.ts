import { AnnalError } from "../errors.ts";

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

  constructor(needed: string) {
    super("ANNAL_FORBIDDEN", `this needs the access function "${needed}"`, {
      status: 403,
      hint: `grant it: annal token create --name <n> --access ${needed}`,
    });
    this.needed = needed;
  }
}
