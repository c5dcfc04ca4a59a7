import type { FastifyInstance, FastifyRequest } from "fastify";
import { GraphQLError, type ExecutionResult } from "graphql";
// graphql-helix's parts, not its index: the index also loads its own GraphiQL page (a
// 2.3 MB string held for the process's life), and annal serves GraphiQL from the packages.
import { getGraphQLParameters } from "graphql-helix/get-graphql-parameters";
import { shouldRenderGraphiQL } from "graphql-helix/should-render-graphiql";
import { AnnalError, classifyError } from "../errors/index.ts";
import { sessionCookieOf, type Caller } from "../auth/index.ts";
import { logClassified } from "../http/index.ts";
import type { Logger } from "../logger.ts";
import { answer, sendErrors } from "./answer.ts";
import {
  codedError,
  formatGraphqlError,
  GraphqlContentTypeError,
  GRAPHQL_CODES,
  graphqlExtensions,
} from "./errors.ts";
import { CompiledData } from "./gateway/compile.ts";
import type { Reads } from "./gateway/entry-reads.ts";
import { ReadState } from "./gateway/read-state.ts";
import { buildGateway, type Gateway } from "./gateway/schema.ts";
import { gatewayContext } from "./gateway-context.ts";
import { graphiqlRoutes } from "./graphiql.ts";
import { responseMediaType } from "./media-type.ts";
import type { ContextRequest, GraphqlPluginOptions } from "./options.ts";
import { documentLimits, runDocument, type DocumentOperation } from "./run-document.ts";

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
      ...(payload.data === undefined
        ? {}
        : {
            data: (payload.data instanceof CompiledData
              ? JSON.parse(payload.data.json)
              : payload.data) as Record<string, unknown>,
          }),
      ...(errors.length === 0 ? {} : { errors }),
    };
  };
  return Object.assign(plugin, { execute });
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
