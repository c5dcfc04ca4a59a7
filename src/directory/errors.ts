import { ResultCodeError } from "ldapts";
import { AnnalError, type ErrorCode } from "../errors/index.ts";
import { isTlsFailure, readTlsFailure, type TlsSettings } from "./tls-failure.ts";

/** The LDAP operation an error came from, as annal names it. */
export type DirectoryOperation =
  "bind" | "search" | "get" | "add" | "modify" | "modifyDN" | "delete";

/**
 * Every failure talking to the directory. `code` tells the conditions apart; the fields say
 * where it happened. `resultCode` is the LDAP result code when the server answered.
 */
export class DirectoryError extends AnnalError {
  readonly operation: DirectoryOperation;
  readonly dn: string | undefined;
  readonly resultCode: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    context: {
      operation: DirectoryOperation;
      dn?: string;
      resultCode?: number;
      status: number;
      hint?: string;
      cause?: unknown;
    },
  ) {
    super(code, message, {
      status: context.status,
      hint: context.hint,
      cause: context.cause,
      // The directory busy or gone (a restart): the caller sends again shortly.
      ...(context.status === 503 ? { headers: { "retry-after": "5" } } : {}),
    });
    this.operation = context.operation;
    this.dn = context.dn;
    this.resultCode = context.resultCode;
  }
}

interface Condition {
  readonly code: ErrorCode;
  readonly status: number;
  readonly what: string;
  readonly hint?: string;
}

const SCHEMA: Omit<Condition, "what"> = {
  code: "ANNAL_LDAP_SCHEMA_VIOLATION",
  status: 422,
  hint: "the directory's schema does not allow this change; see the message for the attribute",
};

/** LDAP result codes (RFC 4511 §4.1.9, 123 from RFC 4370) as annal reports them. */
const CONDITIONS: Readonly<Record<number, Condition>> = {
  3: { code: "ANNAL_LDAP_TIMEOUT", status: 504, what: "the directory's time limit was exceeded" },
  4: {
    code: "ANNAL_LDAP_LIMIT_EXCEEDED",
    status: 422,
    what: "the directory's size limit was exceeded",
    hint: "narrow the filter or page the search",
  },
  11: {
    code: "ANNAL_LDAP_LIMIT_EXCEEDED",
    status: 422,
    what: "an administrative limit of the directory was exceeded",
    hint: "narrow the filter or page the search",
  },
  12: {
    code: "ANNAL_LDAP_CONTROL_UNSUPPORTED",
    status: 502,
    what: "the directory does not support a control annal sent",
  },
  16: {
    code: "ANNAL_LDAP_VALUE_CONFLICT",
    status: 409,
    what: "the entry has no such attribute or value",
  },
  17: { ...SCHEMA, what: "the attribute type is not defined in the directory's schema" },
  18: { ...SCHEMA, what: "the attribute has no matching rule for this comparison" },
  19: { ...SCHEMA, what: "a constraint of the directory was violated" },
  20: {
    code: "ANNAL_LDAP_VALUE_CONFLICT",
    status: 409,
    what: "the attribute already has this value",
  },
  21: { ...SCHEMA, what: "a value does not have the attribute's syntax" },
  32: {
    code: "ANNAL_LDAP_NO_SUCH_OBJECT",
    status: 404,
    what: "there is no such entry",
    hint: "check the DN; the entry or one of its parents does not exist",
  },
  34: {
    code: "ANNAL_LDAP_INVALID_DN",
    status: 400,
    what: "the directory rejected the DN's syntax",
  },
  50: { code: "ANNAL_LDAP_INSUFFICIENT_ACCESS", status: 403, what: "the directory denied access" },
  51: {
    code: "ANNAL_LDAP_UNAVAILABLE",
    status: 503,
    what: "the directory is busy",
    hint: "retry shortly",
  },
  52: {
    code: "ANNAL_LDAP_UNAVAILABLE",
    status: 503,
    what: "the directory is unavailable",
    hint: "retry shortly",
  },
  53: {
    code: "ANNAL_LDAP_UNWILLING",
    status: 422,
    what: "the directory is unwilling to perform the operation",
  },
  64: { ...SCHEMA, what: "the DN violates the directory's naming rules" },
  65: { ...SCHEMA, what: "the entry would violate its object classes" },
  66: {
    code: "ANNAL_LDAP_NOT_A_LEAF",
    status: 409,
    what: "the entry has children",
    hint: "move or delete its children first",
  },
  67: {
    ...SCHEMA,
    what: "the change would remove a value of the entry's RDN",
    hint: "rename the entry instead",
  },
  68: {
    code: "ANNAL_LDAP_ALREADY_EXISTS",
    status: 409,
    what: "an entry with this DN already exists",
  },
  69: { ...SCHEMA, what: "the structural object class of an entry cannot be changed" },
  123: {
    code: "ANNAL_LDAP_PROXY_DENIED",
    status: 403,
    what: "the directory did not let annal's account act as this identity",
    hint: "the bound account needs an authzTo that covers the identity (with authz-policy to), or must be the rootdn",
  },
};

const BIND_REFUSED = new Set([7, 8, 13, 48, 49, 53]);

function diagnostic(error: ResultCodeError): string {
  return error.message.replace(/\s*Code: 0x[0-9a-f]+$/i, "").trim();
}

/** True for errors that mean the connection, not the operation, failed: another one may work. */
export function isConnectionFailure(error: unknown): boolean {
  if (error instanceof AnnalError) return error.code === "ANNAL_LDAP_UNAVAILABLE";
  if (error instanceof ResultCodeError) return false;
  if (!(error instanceof Error)) return false;
  if (isTlsFailure(error)) return false; // the next connection would be shown the same certificate
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code === "string") return true; // ECONNREFUSED, ECONNRESET, EPIPE, ...
  return /Connection closed|Socket error|Connection timeout|connection not established|ECONN/i.test(
    error.message,
  );
}

/**
 * Turns whatever ldapts threw into a `DirectoryError`. `url` and `bindDN` go into the messages
 * of connection and bind failures, where they are what the user needs to check; `tls`, how the
 * connection uses TLS, into those of a certificate that does not verify.
 */
export function directoryError(
  error: unknown,
  context: {
    operation: DirectoryOperation;
    dn?: string;
    url: string;
    bindDN: string;
    tls?: TlsSettings | undefined;
  },
): DirectoryError {
  if (error instanceof DirectoryError) return error;
  const { operation, dn, url, bindDN } = context;
  const on = dn === undefined ? "" : ` ${JSON.stringify(dn)}`;
  if (isTlsFailure(error)) {
    const { message, hint } = readTlsFailure(error, context.tls ?? plainSettings(url));
    return new DirectoryError("ANNAL_LDAP_TLS_FAILED", message, {
      operation,
      dn,
      status: 502,
      hint,
      cause: error,
    });
  }
  if (error instanceof ResultCodeError) {
    const server = diagnostic(error);
    if (operation === "bind" && BIND_REFUSED.has(error.code)) {
      const why =
        error.code === 49
          ? "invalid credentials (wrong DN or password)"
          : server || `result code ${error.code}`;
      return new DirectoryError(
        "ANNAL_LDAP_BIND_FAILED",
        `the directory at ${url} refused the bind as ${JSON.stringify(bindDN)}: ${why}`,
        {
          operation,
          resultCode: error.code,
          status: 502,
          hint: "check the bind DN and password annal is configured with for the directory",
          cause: error,
        },
      );
    }
    const condition = CONDITIONS[error.code];
    const what = condition?.what ?? `the directory answered with result code ${error.code}`;
    return new DirectoryError(
      condition?.code ?? "ANNAL_LDAP_OPERATION_FAILED",
      `${operation}${on} failed: ${what}${server && server.toLowerCase() !== what.toLowerCase() ? ` (${server})` : ""}`,
      {
        operation,
        dn,
        resultCode: error.code,
        status: condition?.status ?? 502,
        hint: condition?.hint,
        cause: error,
      },
    );
  }
  const reason =
    error instanceof Error ? error.message.split("\n").pop() || error.message : String(error);
  // Over TLS 1.3 the handshake ends before the server checks a client certificate: a server
  // that wants one (and has none, or refuses it) closes the connection instead of answering.
  const closedOverTls =
    context.tls !== undefined && /Connection closed before message response/.test(reason);
  return new DirectoryError(
    "ANNAL_LDAP_UNAVAILABLE",
    closedOverTls
      ? `the directory at ${url} closed the TLS connection without answering (${operation}${on})`
      : `cannot reach the directory at ${url} (${operation}${on}): ${reason}`,
    {
      operation,
      dn,
      status: 503,
      hint: closedOverTls
        ? `the directory closed the TLS connection without answering: if it requires a client certificate, set [directory.tls] certFile and keyFile${context.tls?.clientCertificate ? " to one it accepts" : ""}; otherwise check that it is running`
        : "check that the directory server is running and that the URL is right",
      cause: error,
    },
  );
}

/** What a TLS failure's message says of a connection annal did not set up for TLS. */
function plainSettings(url: string): TlsSettings {
  const host = URL.canParse(url) ? new URL(url).hostname : url;
  return {
    url,
    startTLS: false,
    caFile: undefined,
    trustedCAs: [],
    checkedName: host,
    clientCertificate: false,
  };
}

export function timeoutError(context: {
  operation: DirectoryOperation;
  dn?: string;
  url: string;
  timeoutMs: number;
}): DirectoryError {
  const on = context.dn === undefined ? "" : ` ${JSON.stringify(context.dn)}`;
  return new DirectoryError(
    "ANNAL_LDAP_TIMEOUT",
    `${context.operation}${on} got no answer from the directory at ${context.url} within ${context.timeoutMs} ms`,
    {
      operation: context.operation,
      dn: context.dn,
      status: 504,
      hint: "the directory is slow or unreachable; a write that timed out may still have been applied",
    },
  );
}
