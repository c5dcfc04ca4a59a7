import {
  GraphQLError,
  GraphQLScalarType,
  Kind,
  valueFromASTUntyped,
  type ValueNode,
} from "graphql";
import { InvalidDNError, parseDN } from "../../directory/index.ts";
import { GRAPHQL_CODES } from "../errors.ts";

function invalid(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: GRAPHQL_CODES.badUserInput } });
}

function checkedDN(value: unknown): string {
  if (typeof value !== "string") throw invalid("Invalid DN: expected a string");
  try {
    parseDN(value);
  } catch (error) {
    if (error instanceof InvalidDNError) throw invalid(`Invalid DN: ${error.message}`);
    throw error;
  }
  return value;
}

/** An RFC 4514 DN, checked when it comes in. */
export const DNScalar = new GraphQLScalarType({
  name: "DN",
  serialize: (value) => (typeof value === "string" ? value : String(value)),
  parseValue: checkedDN,
  parseLiteral: (node) => {
    if (node.kind !== Kind.STRING) throw invalid("Invalid DN: expected a string");
    return checkedDN(node.value);
  },
});

export const URLScalar = new GraphQLScalarType({
  name: "URL",
  serialize: (value) => (typeof value === "string" ? value : String(value)),
  parseValue: (value) => {
    if (typeof value !== "string") throw invalid("Invalid URL: expected a string");
    return value;
  },
  parseLiteral: (node) => {
    if (node.kind !== Kind.STRING) throw invalid("Invalid URL: expected a string");
    return node.value;
  },
});

/** Any JSON value; Buffers are written as base64. */
export const JSONScalar = new GraphQLScalarType({
  name: "JSON",
  serialize: (value) => (Buffer.isBuffer(value) ? value.toString("base64") : value),
  parseValue: (value) => value,
  parseLiteral: (node: ValueNode, variables) => valueFromASTUntyped(node, variables),
});

export const LDAP_SCOPES = ["base", "one", "sub", "children"] as const;
export type LdapScope = (typeof LDAP_SCOPES)[number];

function checkedScope(value: unknown): LdapScope {
  if (typeof value === "string" && (LDAP_SCOPES as readonly string[]).includes(value)) {
    return value as LdapScope;
  }
  throw invalid(`Invalid scope: expected one of ${LDAP_SCOPES.join(", ")}`);
}

/** `base`, `one`, `sub` or `children`, written `sub` or `"sub"`. */
export const LDAPScopeScalar = new GraphQLScalarType({
  name: "LDAPScope",
  serialize: (value) => value,
  parseValue: checkedScope,
  parseLiteral: (node) => {
    if (node.kind !== Kind.STRING && node.kind !== Kind.ENUM) {
      throw invalid(`Invalid scope: expected one of ${LDAP_SCOPES.join(", ")}`);
    }
    return checkedScope(node.value);
  },
});

export const SCALARS: readonly GraphQLScalarType[] = [
  DNScalar,
  URLScalar,
  JSONScalar,
  LDAPScopeScalar,
];
