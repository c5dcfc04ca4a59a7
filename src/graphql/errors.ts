import { GraphQLError } from "graphql";
import { AnnalError, isAnnalError } from "../errors.ts";

/**
 * GraphQL's `extensions.code` values. The first six are the product documents'; the limit
 * codes are annal's (the documents' 0.3.0 has none for aliases and directives); the rest name
 * conditions of the gateway itself.
 */
export const GRAPHQL_CODES = {
  unauthenticated: "UNAUTHENTICATED",
  notFound: "NOT_FOUND",
  badUserInput: "BAD_USER_INPUT",
  internal: "INTERNAL_SERVER_ERROR",
  validationFailed: "GRAPHQL_VALIDATION_FAILED",
  parseFailed: "GRAPHQL_PARSE_FAILED",
  depthLimit: "GRAPHQL_DEPTH_LIMIT_EXCEEDED",
  aliasLimit: "GRAPHQL_ALIAS_LIMIT_EXCEEDED",
  directiveLimit: "GRAPHQL_DIRECTIVE_LIMIT_EXCEEDED",
  costLimit: "GRAPHQL_COST_LIMIT_EXCEEDED",
  entryLimit: "GRAPHQL_ENTRY_LIMIT_EXCEEDED",
  forbidden: "FORBIDDEN",
  conflict: "CONFLICT",
  unavailable: "SERVICE_UNAVAILABLE",
  restBackend: "REST_BACKEND_FAILED",
  badRequest: "BAD_REQUEST",
  methodNotAllowed: "METHOD_NOT_ALLOWED",
} as const;

export type GraphqlCode = (typeof GRAPHQL_CODES)[keyof typeof GRAPHQL_CODES];

/**
 * A malformed argument: `first` out of range, a cursor or an ID that is not one, a filter that
 * cannot be used. The message is the product documents' (`Invalid pagination cursor`,
 * `Invalid <name> filter`, `Invalid <field>`).
 */
export class BadUserInputError extends AnnalError {
  readonly argument: string | undefined;
  constructor(message: string, options: { argument?: string; hint?: string } = {}) {
    super("ANNAL_GRAPHQL_BAD_USER_INPUT", message, { status: 400, hint: options.hint });
    this.argument = options.argument;
  }
}

/** A directory resolver ran on a gateway started without a `[directory]`. */
export class DirectoryNotConfiguredError extends AnnalError {
  constructor() {
    super("ANNAL_DIRECTORY_NOT_CONFIGURED", "this field reads the directory, and annal has none", {
      status: 503,
      hint: "configure [directory] in annal.toml (url, bindDN, password, base)",
    });
  }
}

/** A `@rest` call failed or its backend answered with a status other than 2xx. */
export class RestBackendError extends AnnalError {
  readonly backend: string;
  /** The backend's HTTP status; undefined when no answer came. */
  readonly responseStatus: number | undefined;
  readonly backendMessage: string;

  constructor(
    backend: string,
    responseStatus: number | undefined,
    backendMessage: string,
    cause?: unknown,
  ) {
    super(
      "ANNAL_REST_BACKEND_FAILED",
      responseStatus === undefined
        ? `the REST backend "${backend}" could not be reached: ${backendMessage}`
        : `the REST backend "${backend}" answered ${responseStatus}: ${backendMessage}`,
      { status: 502, cause },
    );
    this.backend = backend;
    this.responseStatus = responseStatus;
    this.backendMessage = backendMessage;
  }
}

/**
 * A schema file the gateway cannot serve: it names the file, the line and column, and the
 * directive (or the GraphQL rule) at fault. Start-up stops with it.
 */
export class GatewaySchemaError extends AnnalError {
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly column: number | undefined;

  constructor(
    message: string,
    where: { file?: string; line?: number; column?: number; hint?: string; cause?: unknown } = {},
  ) {
    const at =
      where.file === undefined
        ? ""
        : `${where.file}${where.line === undefined ? "" : `:${where.line}:${where.column ?? 1}`}: `;
    super("ANNAL_GRAPHQL_SCHEMA_INVALID", `${at}${message}`, {
      status: 500,
      hint: where.hint ?? "fix the schema file at that place; annal reads it at start-up",
      cause: where.cause,
    });
    this.file = where.file;
    this.line = where.line;
    this.column = where.column;
  }
}

/** The category code of an AnnalError, by its HTTP status. */
function codeForStatus(status: number): GraphqlCode {
  if (status === 401) return GRAPHQL_CODES.unauthenticated;
  if (status === 403) return GRAPHQL_CODES.forbidden;
  if (status === 404) return GRAPHQL_CODES.notFound;
  if (status === 409) return GRAPHQL_CODES.conflict;
  if (status >= 400 && status < 500) return GRAPHQL_CODES.badUserInput;
  if (status === 502 || status === 503 || status === 504) return GRAPHQL_CODES.unavailable;
  return GRAPHQL_CODES.internal;
}

export interface FormattedError {
  readonly error: GraphQLError;
  /** Our fault: log it with its stack; the answer says nothing of it but the request id. */
  readonly internal: boolean;
}

/**
 * Gives every error of an answer its `extensions.code`: errors that already carry one (parse,
 * validation, limits) keep it; an AnnalError thrown by a resolver gets the category of its
 * status, its own code as `annalCode`, and its hint; anything else is an
 * INTERNAL_SERVER_ERROR whose message names only the request id.
 */
export function formatGraphqlError(error: GraphQLError, requestId: string): FormattedError {
  const original = error.originalError;
  const existing = error.extensions?.code;
  if (typeof existing === "string") return { error, internal: false };
  if (original instanceof RestBackendError) {
    return {
      error: withExtensions(error, original.message, {
        code: GRAPHQL_CODES.restBackend,
        annalCode: original.code,
        backend: original.backend,
        status: original.responseStatus ?? null,
        backendMessage: original.backendMessage,
      }),
      internal: false,
    };
  }
  if (isAnnalError(original)) {
    return {
      error: withExtensions(error, original.message, {
        code: codeForStatus(original.status),
        annalCode: original.code,
        ...(original.hint === undefined ? {} : { hint: original.hint }),
      }),
      internal: original.status >= 500 && codeForStatus(original.status) === GRAPHQL_CODES.internal,
    };
  }
  if (original === undefined || original === null) {
    // graphql-js's own: a variable that does not coerce, a non-null field that resolved null.
    const input = /^Variable "\$|^Argument "|got invalid value|^Expected type/.test(error.message);
    return {
      error: withExtensions(error, error.message, {
        code: input ? GRAPHQL_CODES.badUserInput : GRAPHQL_CODES.internal,
      }),
      internal: !input,
    };
  }
  return {
    error: withExtensions(
      error,
      `Unexpected error; the server log has the details under request ${requestId}`,
      { code: GRAPHQL_CODES.internal, requestId },
    ),
    internal: true,
  };
}

function withExtensions(
  error: GraphQLError,
  message: string,
  extensions: Record<string, unknown>,
): GraphQLError {
  return new GraphQLError(message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    originalError: error.originalError,
    extensions: { ...error.extensions, ...extensions },
  });
}

/** A GraphQLError carrying `code` (for errors raised before execution). */
export function codedError(message: string, code: GraphqlCode, extra: object = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code, ...extra } });
}
