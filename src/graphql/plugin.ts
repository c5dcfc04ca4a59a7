import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  GraphQLError,
  type ExecutionResult,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from "graphql";
// graphql-helix's parts, not its index: the index also loads its own GraphiQL page (a
// 2.3 MB string held for the process's life), and annal serves GraphiQL from the packages.
import { getGraphQLParameters } from "graphql-helix/get-graphql-parameters";
import { processRequest } from "graphql-helix/process-request";
import { shouldRenderGraphiQL } from "graphql-helix/should-render-graphiql";
import type { ExecutionPatchResult } from "graphql-helix/types";
import { MAX_FILTER_DEPTH } from "../filters/index.ts";
import { AnnalError, classifyError } from "../errors/index.ts";
import { accessAt, sessionCookieOf, type Authentication, type Caller } from "../auth/index.ts";
import { logClassified } from "../http/index.ts";
import type { AnnalConfig } from "../config/index.ts";
import type { Pool } from "../db/index.ts";
import type { DirectoryClient } from "../directory/index.ts";
import type { Logger } from "../logger.ts";
import type { EngineDeps } from "../workflow/index.ts";
import type { DirectoryWrite, GatewayContext } from "./context.ts";
import type { LogPosition } from "../store/index.ts";
import {
  codedError,
  formatGraphqlError,
  GraphqlContentTypeError,
  GRAPHQL_CODES,
  graphqlExtensions,
  type GraphqlCode,
} from "./errors.ts";
import type { Reads } from "./gateway/entry-reads.ts";
import { buildGateway, type Gateway } from "./gateway/schema.ts";
import { graphiqlRoutes } from "./graphiql.ts";
import { acceptedLanguages } from "./gateway/i18n.ts";
import { DocumentCache } from "./document-cache.ts";
import { parseLimited, validationRules } from "./limits.ts";
import { graphqlResponseStatus, responseMediaType, type ResponseMediaType } from "./media-type.ts";
import { createEntryLoaders } from "./gateway/loaders.ts";
import { projectionDirectory, type ProjectionSource } from "./gateway/projection-reads.ts";
import { ReadState } from "./gateway/read-state.ts";
import { momentOfOperation } from "./at-directive.ts";
import { momentContext } from "./moment-context.ts";
import { costLimitRule } from "./cost.ts";
import { entryBudget } from "./entry-budget.ts";
import { valueDepth } from "./value-depth.ts";
import { viewerOf } from "./viewer.ts";

/**
 * Deepest nesting of a request's variables: room for a `where` at its bound (two levels a
 * step, an `_and_` list and its item) and more. graphql-js coerces variables recursively, so
 * thousands of levels would overflow the stack before a resolver could refuse them.
 */
const MAX_VARIABLES_DEPTH = 2 * MAX_FILTER_DEPTH + 16;

export interface GraphqlPluginOptions {
  readonly pool: Pool;
  /** Who the caller is; without credentials, every request is UNAUTHENTICATED. */
  readonly authentication: Authentication;
  /** The directory; without one, fields that read or write it fail with SERVICE_UNAVAILABLE. */
  readonly directory: DirectoryClient | undefined;
  readonly config: AnnalConfig;
  readonly log: Logger;
  /**
   * Called after each directory write a mutation makes, before its answer is sent: the place
   * to capture the change and wait until the projections show it, at most `timeoutMs`
   * (`[graphql] readYourWritesTimeout`); it answers the log position they reached. A
   * `ProjectionTimeoutError` makes the rest of the request read the directory.
   */
  readonly afterWrite?: (write: DirectoryWrite, timeoutMs: number) => Promise<LogPosition | void>;
  /**
   * What capture records, for reading it from the projections (`[graphql] reads`); without
   * it every read goes to the directory.
   */
  readonly projection?: ProjectionSource;
  /**
   * Called just before each directory write (e.g. to note the write's cause so that capture
   * links the change to it). If it throws, the write is not made and the mutation fails.
   */
  readonly beforeWrite?: (write: DirectoryWrite) => Promise<void>;
  /** The workflow engine the workflow fields command; without it they answer 503's code. */
  readonly workflows?: EngineDeps;
  /** A gateway built beforehand (`buildGateway`); built from `config` when left out. */
  readonly gateway?: Gateway;
  /** The route. Default `/graphql`. */
  readonly path?: string;
}

/** Codes of errors that refuse a document before execution: still a 200 answer. */
const DOCUMENT_CODES = new Set<unknown>([
  GRAPHQL_CODES.parseFailed,
  GRAPHQL_CODES.validationFailed,
  GRAPHQL_CODES.depthLimit,
  GRAPHQL_CODES.aliasLimit,
  GRAPHQL_CODES.directiveLimit,
  GRAPHQL_CODES.costLimit,
]);

interface Payload {
  readonly data?: unknown;
  readonly errors?: readonly GraphQLError[];
}

/**
 * One document run as a given caller, outside an HTTP request to `/graphql` (a custom
 * endpoint's `graphql` and `query`): what the caller's request gives the context.
 */
export interface GraphqlExecution {
  readonly caller: Caller;
  /** The request the document runs for: its id, its `Accept-Language`, its logger. */
  readonly request: ContextRequest;
  readonly source: string;
  readonly variables?: Readonly<Record<string, unknown>> | undefined;
  readonly operationName?: string | undefined;
}

/** Runs a document as `POST /graphql` would for its caller; errors carry `extensions.code`. */
export type GraphqlExecutor = (execution: GraphqlExecution) => Promise<ExecutionResult>;

/** What the context of a document run reads of its request. */
export interface ContextRequest {
  readonly id: string;
  readonly headers: { readonly "accept-language"?: string | undefined };
  readonly log: unknown;
}

/**
 * The GraphQL gateway as a Fastify plugin: `POST /graphql` (and `GET` for queries) through
 * graphql-helix, and GraphiQL for a browser's `GET` when introspection is on. The schema is built when the plugin registers, so a schema error stops
 * start-up. Every request that reaches GraphQL answers 200 with `errors[]`, each with
 * `extensions.code`; a body that is not JSON answers 400.
 *
 * @example
 * await server.register(graphqlPlugin({ pool, authentication, directory, config, log, afterWrite }));
 */
export function graphqlPlugin(options: GraphqlPluginOptions) {
  let built: Promise<Gateway> | undefined;
  const gatewayOf = () =>
    (built ??= Promise.resolve(options.gateway ?? buildGateway(options.config)));
  const limits = documentLimits(options.config);
  const plugin = async (server: FastifyInstance): Promise<void> => {
    const gateway = await gatewayOf();
    const { config } = options;
    const path = options.path ?? "/graphql";
    // GraphiQL in a browser, from annal's own files, when introspection is on.
    const graphiql = config.graphql.introspection ? graphiqlRoutes(path) : undefined;
    if (graphiql) await server.register(graphiql.routes);

    // Errors before GraphQL runs (a body that is not JSON): the classifier's reading, with
    // the HTTP status it names and the body GraphQL clients read.
    server.setErrorHandler((error, request, reply) => {
      const classified = classifyError(error, request.id);
      logClassified(request, error, classified);
      return sendErrors(
        reply.headers(classified.headers),
        classified.status,
        [
          // A 5xx of annal's own reading (ANNAL_DATABASE_BUSY before the request was
          // authenticated) keeps its code; anything else keeps the request's framing.
          classified.status >= 500 && classified.kind !== "ANNAL_INTERNAL"
            ? new GraphQLError(classified.message, { extensions: graphqlExtensions(classified) })
            : codedError(
                classified.message,
                classified.status >= 500 ? GRAPHQL_CODES.internal : GRAPHQL_CODES.badRequest,
                classified.internal
                  ? { requestId: request.id }
                  : {
                      annalCode: classified.code,
                      ...(classified.hint === undefined ? {} : { hint: classified.hint }),
                    },
              ),
        ],
        responseMediaType(request.headers),
      );
    });

    // A document posted as `application/graphql` (an old convention the GraphQL-over-HTTP
    // spec dropped): refused with a code of its own, so the client learns to send JSON.
    server.addContentTypeParser("application/graphql", (_request, _payload, done) => {
      done(new GraphqlContentTypeError(), undefined);
    });

    // Any other method: 405 naming the two the route takes.
    server.route({
      method: ["PUT", "PATCH", "DELETE"],
      url: path,
      handler: async (request, reply) =>
        sendErrors(
          reply.header("allow", "GET, POST"),
          405,
          [
            codedError(
              "GraphQL only supports GET and POST requests",
              GRAPHQL_CODES.methodNotAllowed,
              {
                annalCode: "ANNAL_METHOD_NOT_ALLOWED",
              },
            ),
          ],
          responseMediaType(request.headers),
        ),
    });

    server.route({
      method: ["GET", "POST"],
      url: path,
      handler: async (request, reply) => {
        const mediaType = responseMediaType(request.headers);
        const helixRequest = {
          body: request.body,
          headers: request.headers,
          method: request.method,
          query: request.query,
        };
        if (graphiql && shouldRenderGraphiQL(helixRequest)) {
          return graphiql.send(reply, sessionCookieOf(request.headers.cookie) !== undefined);
        }
        if (
          request.method === "POST" &&
          (request.body === null || typeof request.body !== "object" || Array.isArray(request.body))
        ) {
          return sendErrors(
            reply,
            400,
            [
              codedError(
                "the request body must be a JSON object with a query",
                GRAPHQL_CODES.badRequest,
              ),
            ],
            mediaType,
          );
        }
        let caller: Caller;
        try {
          caller = await callerOf(request, options);
        } catch (error) {
          // A refused request still reaches GraphQL's answer: 200 with the error's code in
          // application/json, the error's own status in application/graphql-response+json.
          const classified = classifyError(error, request.id);
          if (classified.status !== 401 && classified.status !== 403) throw error;
          logClassified(request, error, classified);
          return sendErrors(
            reply.headers(classified.headers),
            mediaType === "application/json" ? 200 : classified.status,
            [new GraphQLError(classified.message, { extensions: graphqlExtensions(classified) })],
            mediaType,
          );
        }
        const { operationName, query, variables } = getGraphQLParameters(helixRequest);
        const state = await ReadState.start(options);
        const context = (reads: Reads, operation: DocumentOperation) =>
          gatewayContext(caller, request, options, reads, state, operation);
        const { status, headers, payload } = await runDocument(gateway, limits, context, {
          operationName,
          query,
          variables,
          request: helixRequest,
        });
        return answer(reply.headers(headers), request, mediaType, status, payload, state);
      },
    });
  };
  /** The same execution for a caller authenticated elsewhere: no HTTP call to ourselves. */
  const execute: GraphqlExecutor = async ({
    caller,
    request,
    source,
    variables,
    operationName,
  }) => {
    const gateway = await gatewayOf();
    const state = await ReadState.start(options);
    const context = (reads: Reads, operation: DocumentOperation) =>
      gatewayContext(caller, request, options, reads, state, operation);
    const { payload } = await runDocument(gateway, limits, context, {
      operationName,
      query: source,
      variables,
      request: { body: {}, headers: {}, method: "POST", query: {} },
    });
    const errors = (payload.errors ?? []).map((error) => {
      const { error: formatted, internal } = formatGraphqlError(error, request.id);
      if (internal) {
        (request.log as Logger).error(
          { err: error.originalError ?? error, path: error.path },
          "GraphQL field failed",
        );
      }
      return formatted;
    });
    return {
      ...(payload.data === undefined ? {} : { data: payload.data as Record<string, unknown> }),
      ...(errors.length === 0 ? {} : { errors }),
    };
  };
  return Object.assign(plugin, { execute });
}

type DocumentLimits = ReturnType<typeof documentLimits>;

/**
 * `[graphql.limits]` as the parser and the validation rules apply them, with the documents
 * parsed and checked so far.
 */
function documentLimits(config: AnnalConfig) {
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
async function runDocument(
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

async function callerOf(request: FastifyRequest, options: GraphqlPluginOptions): Promise<Caller> {
  const caller = await options.authentication.authenticate(request);
  // Cross-site requests cannot send JSON without a preflight: with the cookie, only JSON.
  if (caller.credential === "session" && request.method === "POST") {
    const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "application/json") {
      throw new AnnalError(
        "ANNAL_CSRF_REJECTED",
        "GraphQL requests made with the session cookie must be posted as application/json",
      );
    }
  }
  return caller;
}

/** The operation a document runs, as the context is made for it. */
interface DocumentOperation {
  readonly schema: GraphQLSchema;
  readonly definition: OperationDefinitionNode | undefined;
  readonly variables: Record<string, unknown> | undefined;
}

/** The context of one document run as `caller`, for `request`, reading entries with `reads`. */
function gatewayContext(
  caller: Caller,
  request: ContextRequest,
  options: GraphqlPluginOptions,
  reads: Reads,
  state: ReadState,
  operation: DocumentOperation,
): GatewayContext {
  const { config } = options;
  const clock = () => ({ now: new Date(), timeZone: config.rest.timeZone });
  // A mutation checks the entry it writes, and answers with it, as the directory has it: the
  // projections may not show it yet (a change another writer just made, an import not yet
  // applied). Its wait for its change makes the requests after it read their writes.
  if (operation.definition?.operation === "mutation") state.readDirectory();
  const at = momentOfOperation(
    operation.schema,
    operation.definition,
    operation.variables,
    clock(),
  );
  const { attributes, binaryAttributes } = reads;
  // One budget for both sources: `maxEntries` bounds what the request reads, wherever from.
  const spent = { read: 0 };
  const { maxEntries } = config.graphql.limits;
  if (at !== undefined) {
    return momentContext(caller, request, options, reads, state, at, { clock, spent });
  }
  const budgeted = options.directory && entryBudget(options.directory, maxEntries, spent);
  const sources = {
    directory: budgeted && {
      directory: budgeted,
      loaders: createEntryLoaders({ directory: budgeted, attributes, binaryAttributes }),
    },
    projection:
      options.directory && options.projection
        ? (() => {
            const directory = entryBudget(
              projectionDirectory(options.directory, options.projection),
              maxEntries,
              spent,
            );
            return {
              directory,
              loaders: createEntryLoaders({ directory, attributes, binaryAttributes }),
            };
          })()
        : undefined,
  };
  const current = () => sources[state.source] ?? sources.directory;
  const afterWrite = options.afterWrite;
  return {
    requestId: request.id,
    viewer: viewerOf(caller, config.graphql.actorDN, config.directory?.base),
    clock,
    accessAt: (at) => accessAt(options.pool, at),
    history: options.pool,
    workflows: options.workflows && { engine: options.workflows },
    get directory() {
      return current()?.directory;
    },
    get loaders() {
      return current()?.loaders;
    },
    readsFrom: (source) => sources[source],
    attributes,
    binaryAttributes,
    languages: acceptedLanguages(request.headers["accept-language"]),
    log: request.log as unknown as Logger,
    beforeWrite: options.beforeWrite,
    afterWrite:
      afterWrite &&
      (async (write) => {
        // The other source's loaders have not seen the write either.
        sources.projection?.loaders.forget(write.dn);
        sources.directory?.loaders.forget(write.dn);
        if (write.newDN !== undefined) {
          sources.projection?.loaders.forget(write.newDN);
          sources.directory?.loaders.forget(write.newDN);
        }
        await state.written(() => afterWrite(write, config.graphql.readYourWritesTimeout));
      }),
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

/**
 * Sends a helix result: every error coded; a document refused by parsing, validation or a
 * limit answers 200 in `application/json` and 400 in `application/graphql-response+json`
 * (where an answer without `data` is never 200); helix's other refusals (no query, a mutation
 * over GET) keep their status.
 */
function answer(
  reply: FastifyReply,
  request: FastifyRequest,
  mediaType: ResponseMediaType,
  status: number,
  payload: Payload,
  state: ReadState,
) {
  const fallback: GraphqlCode =
    status === 405
      ? GRAPHQL_CODES.methodNotAllowed
      : status >= 400 && status < 500
        ? GRAPHQL_CODES.badRequest
        : GRAPHQL_CODES.internal;
  const errors = (payload.errors ?? []).map((error) => {
    if (status === 200 || typeof error.extensions?.code === "string") {
      const { error: formatted, internal } = formatGraphqlError(error, request.id);
      if (internal)
        request.log.error(
          { err: error.originalError ?? error, path: error.path },
          "GraphQL field failed",
        );
      return formatted;
    }
    return codedError(error.message, fallback);
  });
  const refusedDocument =
    errors.length > 0 && errors.every((error) => DOCUMENT_CODES.has(error.extensions.code));
  const legacyStatus = refusedDocument ? 200 : status;
  const finalStatus =
    mediaType === "application/json"
      ? legacyStatus
      : graphqlResponseStatus(legacyStatus, {
          hasData: payload.data !== undefined,
          codes: errors.map((error) => error.extensions.code),
        });
  // The database gone under a field (a PostgreSQL restart): the whole answer is a 503 to send
  // again, with Retry-After, as REST answers; application/json keeps its 200.
  const unreachable = errors.find(
    (error) => error.extensions.code === "ANNAL_DATABASE_UNREACHABLE",
  );
  if (unreachable) reply.header("retry-after", String(unreachable.extensions.retryAfter ?? 5));
  const body = {
    ...(payload.data === undefined ? {} : { data: payload.data }),
    ...(errors.length === 0 ? {} : { errors }),
    ...state.extensions(),
  };
  return reply
    .code(unreachable && mediaType !== "application/json" ? 503 : finalStatus)
    .type(`${mediaType}; charset=utf-8`)
    .send(JSON.stringify(body));
}

function sendErrors(
  reply: FastifyReply,
  status: number,
  errors: readonly GraphQLError[],
  mediaType: ResponseMediaType,
) {
  return reply.code(status).type(`${mediaType}; charset=utf-8`).send(JSON.stringify({ errors }));
}
