import { maxAliasesRule } from "@escape.tech/graphql-armor-max-aliases";
import { maxDepthRule } from "@escape.tech/graphql-armor-max-depth";
import { maxDirectivesRule } from "@escape.tech/graphql-armor-max-directives";
import {
  GraphQLError,
  NoSchemaIntrospectionCustomRule,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type GraphQLSchema,
  type ValidationContext,
  type ValidationRule,
} from "graphql";
import type { GraphqlConfig } from "../config/index.ts";
import { GRAPHQL_CODES, type GraphqlCode } from "./errors.ts";

type Limits = GraphqlConfig["limits"];

/** GraphQL Armor reports through this instead of throwing, with annal's own code. */
function report(code: GraphqlCode) {
  return [
    (context: ValidationContext | null, error: GraphQLError) => {
      const message = error.message.replace(/^Syntax Error: /, "");
      context?.reportError(new GraphQLError(message, { extensions: { code } }));
    },
  ];
}

/**
 * graphql-js's own rules, then the limits (depth, aliases, directives) and, unless allowed,
 * the refusal of introspection. Added to `specifiedRules`, never replacing them.
 */
export function validationRules(limits: Limits, introspection: boolean): ValidationRule[] {
  const shared = { propagateOnRejection: false, exposeLimits: true } as const;
  return [
    ...specifiedRules,
    maxDepthRule({ ...shared, n: limits.maxDepth, onReject: report(GRAPHQL_CODES.depthLimit) }),
    maxAliasesRule({ ...shared, n: limits.maxAliases, onReject: report(GRAPHQL_CODES.aliasLimit) }),
    maxDirectivesRule({
      ...shared,
      n: limits.maxDirectives,
      onReject: report(GRAPHQL_CODES.directiveLimit),
    }),
    ...(introspection ? [] : [NoSchemaIntrospectionCustomRule]),
  ] as ValidationRule[];
}

/** Parses with the token limit; a syntax error or too many tokens is GRAPHQL_PARSE_FAILED. */
export function parseLimited(maxTokens: number) {
  return (source: string): DocumentNode => {
    try {
      return parse(source, { maxTokens });
    } catch (error) {
      if (!(error instanceof GraphQLError)) throw error;
      throw new GraphQLError(error.message, {
        source: error.source,
        positions: error.positions,
        extensions: { code: GRAPHQL_CODES.parseFailed },
      });
    }
  };
}

const LIMIT_CODES = new Set<unknown>([
  GRAPHQL_CODES.costLimit,
  GRAPHQL_CODES.depthLimit,
  GRAPHQL_CODES.aliasLimit,
  GRAPHQL_CODES.directiveLimit,
]);

/**
 * Validation with the rules. A limit's error keeps its code; every other one (a literal a
 * scalar refuses included) is GRAPHQL_VALIDATION_FAILED.
 */
export function validateCoded(
  schema: GraphQLSchema,
  document: DocumentNode,
  rules: readonly ValidationRule[],
): readonly GraphQLError[] {
  return validate(schema, document, rules).map((error) =>
    LIMIT_CODES.has(error.extensions.code)
      ? error
      : new GraphQLError(error.message, {
          nodes: error.nodes,
          source: error.source,
          positions: error.positions,
          extensions: { ...error.extensions, code: GRAPHQL_CODES.validationFailed },
        }),
  );
}
