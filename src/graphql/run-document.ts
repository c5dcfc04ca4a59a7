import {
  execute,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";
import { processRequest } from "graphql-helix/process-request";
import type { ExecutionPatchResult } from "graphql-helix/types";
import type { AnnalConfig } from "../config/index.ts";
import { MAX_FILTER_DEPTH } from "../filters/index.ts";
import type { GatewayContext } from "./context.ts";
import { costLimitRule } from "./cost.ts";
import { DocumentCache } from "./document-cache.ts";
import { codedError, GRAPHQL_CODES } from "./errors.ts";
import { compiledRead, compileStats } from "./gateway/compile.ts";
import type { Reads } from "./gateway/entry-reads.ts";
import type { Gateway } from "./gateway/schema.ts";
import { parseLimited, validationRules } from "./limits.ts";
import type { Payload } from "./options.ts";
import { valueDepth } from "./value-depth.ts";

/**
 * Deepest nesting of a request's variables: room for a `where` at its bound (two levels a
 * step, an `_and_` list and its item) and more. graphql-js coerces variables recursively, so
 * thousands of levels would overflow the stack before a resolver could refuse them.
 */
const MAX_VARIABLES_DEPTH = 2 * MAX_FILTER_DEPTH + 16;

/** The operation a document runs, as the context is made for it. */
export interface DocumentOperation {
  readonly schema: GraphQLSchema;
  readonly definition: OperationDefinitionNode | undefined;
  readonly variables: Record<string, unknown> | undefined;
}

export type DocumentLimits = ReturnType<typeof documentLimits>;

/**
 * `[graphql.limits]` as the parser and the validation rules apply them, with the documents
 * parsed and checked so far.
 */
export function documentLimits(config: AnnalConfig) {
  const { limits, introspection } = config.graphql;
  return {
    documents: new DocumentCache(
      parseLimited(limits.maxTokens),
      validationRules(limits, introspection),
    ),
    maxCost: limits.maxCost,
  };
}

/**
 * Runs one document with `/graphql`'s limits (tokens, depth, aliases, directives, cost,
 * variables' depth) through graphql-helix, for the HTTP route and for `execute` alike.
 */
export async function runDocument(
  gateway: Gateway,
  limits: DocumentLimits,
  context: (reads: Reads, operation: DocumentOperation) => GatewayContext,
  params: {
    readonly operationName: string | undefined;
    readonly query: string | undefined;
    readonly variables: unknown;
    readonly request: Parameters<typeof processRequest>[0]["request"];
  },
): Promise<{ status: number; headers: Record<string, string>; payload: Payload }> {
  const { operationName, query, variables } = params;
  if (valueDepth(variables, MAX_VARIABLES_DEPTH) > MAX_VARIABLES_DEPTH) {
    return {
      status: 200,
      headers: {},
      payload: {
        errors: [
          codedError("Invalid variables", GRAPHQL_CODES.badUserInput, {
            hint: `variables nest at most ${MAX_VARIABLES_DEPTH} levels deep`,
          }),
        ],
      },
    };
  }
  const given = variablesOf(variables);
  const result = await processRequest<GatewayContext, object>({
    operationName,
    query,
    variables: variables as Record<string, unknown> | string | undefined,
    request: params.request,
    schema: gateway.schema,
    parse: limits.documents.parse,
    validate: (schema, document) =>
      limits.documents.validate(schema, document, [costLimitRule(limits.maxCost, () => given)]),
    // An operation compiled to SQL answers from one statement; any other, graphql-js runs.
    execute: async (args: ExecutionArgs) => {
      const compiled = (args.contextValue as GatewayContext).compiled;
      const answered = compiled && (await compiledRead(args, compiled));
      if (compiled) compileStats[answered ? "compiled" : "resolved"]++;
      return answered ?? execute(args);
    },
    // The context is made for the document: its searches read what its fields need.
    contextFactory: ({ document, operation, variables }) =>
      context(gateway.reads.of(document, operation), {
        schema: gateway.schema,
        definition: operation,
        variables,
      }),
  });
  if (result.type === "RESPONSE") {
    // Helix's own headers but its Content-Type, which the answer sets: `Allow` for a 405.
    const headers = Object.fromEntries(
      result.headers
        .filter(({ name }) => name.toLowerCase() !== "content-type")
        .map(({ name, value }) => [name.toLowerCase(), value]),
    );
    return { status: result.status, headers, payload: result.payload as Payload };
  }
  // Only reached for errors when the client accepts an event stream: answer them as JSON.
  return {
    status: 200,
    headers: {},
    payload: await firstPayload(result.subscribe as Parameters<typeof firstPayload>[0]),
  };
}

/** The request's variables as an object (GET sends them as JSON text); {} for none or junk. */
function variablesOf(variables: unknown): Record<string, unknown> {
  let value = variables;
  if (typeof value === "string") {
    try {
      value = JSON.parse(value) as unknown;
    } catch {
      return {};
    }
  }
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function firstPayload(
  subscribe: (onResult: (payload: ExecutionPatchResult | ExecutionResult) => void) => Promise<void>,
) {
  let first: Payload = {};
  let seen = false;
  return subscribe((payload) => {
    if (!seen) first = payload as Payload;
    seen = true;
  }).then(() => first);
}
