import { GraphQLError } from "graphql";
import {
  AnnalError,
  GRAPHQL_CODES,
  type GraphqlCode,
  classifyError,
  type ClassifiedError,
} from "../errors/index.ts";

export { GRAPHQL_CODES, type GraphqlCode };

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

/**
 * A document posted as `application/graphql`: GraphQL over HTTP takes a JSON request
 * (`application/json`) or a `GET` with the query in the URL.
 */
export class GraphqlContentTypeError extends AnnalError {
  constructor() {
    super(
      "ANNAL_GRAPHQL_CONTENT_TYPE_UNSUPPORTED",
      "GraphQL requests are not taken as application/graphql",
      { status: 415 },
    );
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
      {
        cause,
        details: { backend, status: responseStatus ?? null, backendMessage },
      },
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

export interface FormattedError {
  readonly error: GraphQLError;
  /** Our fault: log it with its stack; the answer says nothing of it but the request id. */
  readonly internal: boolean;
}

/**
 * Gives every error of an answer its `extensions.code`: errors that already carry one (parse,
 * validation, limits) keep it; graphql-js's own (a variable that does not coerce) are
 * BAD_USER_INPUT; an error a resolver threw takes what the classifier reads in it: its
 * GraphQL code, annal's code as `annalCode`, its hint and details; anything else is an
 * INTERNAL_SERVER_ERROR whose message names only the request id.
 */
export function formatGraphqlError(error: GraphQLError, requestId: string): FormattedError {
  const original = error.originalError;
  const existing = error.extensions?.code;
  if (typeof existing === "string") return { error, internal: false };
  // graphql-js's own: a variable that does not coerce (its cause the scalar's own
  // GraphQLError), a non-null field that resolved null.
  const input = /^Variable "\$|^Argument "|got invalid value|^Expected type/.test(error.message);
  if (original === undefined || original === null || (input && original instanceof GraphQLError)) {
    return {
      error: withExtensions(error, error.message, {
        code: input ? GRAPHQL_CODES.badUserInput : GRAPHQL_CODES.internal,
      }),
      internal: !input,
    };
  }
  const classified = classifyError(original, requestId);
  return {
    error: withExtensions(error, classified.message, graphqlExtensions(classified)),
    internal: classified.internal,
  };
}

/**
 * The `extensions` of a classified error: its GraphQL code, annal's code, hint and details,
 * and `retryAfter` (seconds) where the error's HTTP answer carries `Retry-After` (`WF_LOCKED`,
 * a 503): a GraphQL answer has no header of its own to carry it.
 */
export function graphqlExtensions(classified: ClassifiedError): Record<string, unknown> {
  const retryAfter = Number(classified.headers["retry-after"] ?? Number.NaN);
  return {
    ...classified.details,
    ...(Number.isFinite(retryAfter) ? { retryAfter } : {}),
    code: classified.graphqlCode,
    ...(classified.internal && classified.kind === "ANNAL_INTERNAL"
      ? {}
      : { annalCode: classified.code }),
    ...(classified.hint === undefined ? {} : { hint: classified.hint }),
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
