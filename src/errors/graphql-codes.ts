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
