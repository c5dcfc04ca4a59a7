import type { ErrorCodeSpec } from "./spec.ts";

/** The GraphQL gateway's own conditions; its `extensions.code` values are in `graphql/`. */
export const GRAPHQL_ERROR_CODES = {
  ANNAL_GRAPHQL_BAD_USER_INPUT: {
    status: 400,
    meaning:
      "A malformed argument: `first` outside 1 to 100, `Invalid pagination cursor`, `Invalid <name> filter`, or `Invalid <field>`.",
    graphql: "BAD_USER_INPUT",
  },
  ANNAL_GRAPHQL_CONTENT_TYPE_UNSUPPORTED: {
    status: 415,
    meaning:
      "A GraphQL request posted as `application/graphql`; GraphQL over HTTP takes `application/json`.",
    hint: 'post {"query": "…", "variables": {…}} as application/json, or send a query with GET',
  },
  ANNAL_GRAPHQL_SCHEMA_INVALID: {
    status: 500,
    meaning: "A gateway schema file annal cannot serve; the message names file, line and column.",
    surfaces: ["startup"],
  },
  ANNAL_GRAPHQL_TYPE_UNKNOWN: {
    status: 500,
    meaning: "An entry matches none, or several, of the types a union or interface may resolve to.",
  },
  ANNAL_REST_BACKEND_FAILED: {
    status: 502,
    meaning: "A `@rest` backend could not be reached or answered with a status other than 2xx.",
    graphql: "REST_BACKEND_FAILED",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
