import { AsyncLocalStorage } from "node:async_hooks";
import type { ExecutionResult } from "graphql";
import type { Caller } from "../auth/index.ts";
import type { AnnalConfig } from "../config/index.ts";
import { AnnalError, catalogEntry } from "../errors/index.ts";
import type { GraphqlExecutor } from "../graphql/index.ts";
import type { Logger } from "../logger.ts";
import type { Mailer, Messaging } from "./messaging.ts";
import type { Templating } from "./templating.ts";
import {
  ANONYMOUS_VIEWER,
  tokenOfCaller,
  viewerOfCaller,
  type EndpointViewer,
  type TokenInfo,
} from "./viewer.ts";

/** `c.env` in a handler: the bindings of one request. */
export interface EndpointBindings {
  /** The request's id, as its log lines carry it (`reqId`). */
  readonly requestId: string;
  /** The endpoints' logger (`{ module: "endpoints" }`). */
  readonly logger: Logger;
  /** The request's logger: its lines carry the request id. */
  readonly log: Logger;
  /** The address the request came from (the TCP peer; annal trusts no forwarding header). */
  readonly remoteAddress: string | undefined;
  /** annal's resolved configuration. */
  readonly config: AnnalConfig;
  /** `{ type, id }` of an internal ID (base64 of `<type>:<id>`); a 400 for text that is not one. */
  decodeGlobalId(globalId: string): { type: string; id: string };
  /** The internal ID of `id` as a `type`: base64 of `<type>:<id>`, as GraphQL's `@id` makes it. */
  encodeGlobalId(type: string, id: string): string;
  /**
   * Runs a GraphQL document (`gql` tag) as the caller and returns its `data`; the same
   * document with the same variables runs once per request. Errors throw
   * `ANNAL_ENDPOINT_GRAPHQL_FAILED` (a refusal keeps its status: 401, 403, 400, 404, 409).
   */
  query<T = Record<string, unknown>>(
    source: string,
    variables?: Readonly<Record<string, unknown>>,
  ): Promise<T>;
  /** Runs a GraphQL document as the caller: the whole result, errors included. */
  graphql(
    source: string,
    variables?: Readonly<Record<string, unknown>>,
    operationName?: string,
  ): Promise<ExecutionResult>;
  readonly viewer: EndpointViewer;
  readonly token: TokenInfo | null;
  readonly messaging: Messaging;
  readonly templating: Templating;
}

/** What the bindings are made of, for the whole process. */
export interface BindingServices {
  readonly config: AnnalConfig;
  readonly logger: Logger;
  /** GraphQL run as the caller; undefined where annal serves no GraphQL. */
  readonly execute: GraphqlExecutor | undefined;
  readonly mailer: Mailer;
  readonly templating: Templating;
}

/** What one request brings to its bindings. */
export interface BindingRequest {
  readonly id: string;
  readonly acceptLanguage: string | undefined;
  readonly log: Logger;
  readonly remoteAddress: string | undefined;
  /** Undefined on a public route called without (valid) credentials. */
  readonly caller: Caller | undefined;
}

/** The bindings of the request being handled, for `context.env` used from a closure. */
export const currentBindings = new AsyncLocalStorage<EndpointBindings>();

/** The bindings of one request. */
export function requestBindings(
  services: BindingServices,
  request: BindingRequest,
): EndpointBindings {
  const { caller } = request;
  const graphql: EndpointBindings["graphql"] = async (source, variables, operationName) => {
    if (caller === undefined) {
      return { errors: [unauthenticatedError()] } as unknown as ExecutionResult;
    }
    if (services.execute === undefined) {
      throw new AnnalError(
        "ANNAL_ENDPOINT_GRAPHQL_FAILED",
        "this annal serves no GraphQL, so an endpoint cannot run a document",
      );
    }
    return services.execute({
      caller,
      request: {
        id: request.id,
        headers: { "accept-language": request.acceptLanguage },
        log: request.log,
      },
      source,
      variables,
      operationName,
    });
  };
  const cache = new Map<string, Promise<unknown>>();
  const query: EndpointBindings["query"] = <T>(
    source: string,
    variables?: Readonly<Record<string, unknown>>,
  ) => {
    const key = JSON.stringify([source, variables ?? {}]);
    let answer = cache.get(key);
    if (!answer) {
      answer = graphql(source, variables).then((result) => {
        if (result.errors && result.errors.length > 0) throw graphqlFailed(result);
        return result.data;
      });
      cache.set(key, answer);
    }
    return answer as Promise<T>;
  };
  return {
    requestId: request.id,
    logger: services.logger,
    log: request.log,
    remoteAddress: request.remoteAddress,
    config: services.config,
    decodeGlobalId,
    encodeGlobalId,
    query,
    graphql,
    viewer: caller === undefined ? ANONYMOUS_VIEWER : viewerOfCaller(caller),
    token: caller === undefined ? null : tokenOfCaller(caller),
    messaging: services.mailer.forRequest({
      requestId: request.id,
      account: caller === undefined ? null : { id: caller.account.id, name: caller.account.name },
    }),
    templating: services.templating,
  };
}

/**
 * `context.env`, given to the factory before any request: what belongs to the process is
 * there at once; what belongs to a request (`viewer`, `token`, `query`, ...) is the current
 * request's when used inside a handler, and `ANNAL_ENDPOINT_OUTSIDE_REQUEST` outside one.
 */
export function contextBindings(services: BindingServices): EndpointBindings {
  const current = (name: string): EndpointBindings => {
    const bindings = currentBindings.getStore();
    if (!bindings) {
      throw new AnnalError(
        "ANNAL_ENDPOINT_OUTSIDE_REQUEST",
        `env.${name} belongs to a request: use it inside a handler`,
      );
    }
    return bindings;
  };
  return {
    get requestId() {
      return current("requestId").requestId;
    },
    logger: services.logger,
    get log() {
      return current("log").log;
    },
    get remoteAddress() {
      return current("remoteAddress").remoteAddress;
    },
    config: services.config,
    decodeGlobalId,
    encodeGlobalId,
    query: (source, variables) => current("query").query(source, variables),
    graphql: (source, variables, operationName) =>
      current("graphql").graphql(source, variables, operationName),
    get viewer() {
      return current("viewer").viewer;
    },
    get token() {
      return current("token").token;
    },
    get messaging() {
      return currentBindings.getStore()?.messaging ?? services.mailer.forRequest(undefined);
    },
    templating: services.templating,
  } as EndpointBindings;
}

export function encodeGlobalId(type: string, id: string): string {
  return Buffer.from(`${type}:${id}`, "utf8").toString("base64");
}

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

export function decodeGlobalId(globalId: string): { type: string; id: string } {
  const invalid = () =>
    new AnnalError("ANNAL_ID_INVALID", "the ID is not an internal ID (base64 of <type>:<id>)", {
      hint: "pass an id as GraphQL's id fields give it",
    });
  if (typeof globalId !== "string" || globalId.length > 1_000 || !BASE64.test(globalId)) {
    throw invalid();
  }
  const normal = globalId.replaceAll("-", "+").replaceAll("_", "/");
  const text = Buffer.from(normal, "base64").toString("utf8");
  const colon = text.indexOf(":");
  if (colon <= 0 || colon === text.length - 1) throw invalid();
  return { type: text.slice(0, colon), id: text.slice(colon + 1) };
}

function unauthenticatedError() {
  return {
    message: "this route is public and the request carries no credentials: GraphQL needs a caller",
    extensions: { code: "UNAUTHENTICATED", annalCode: "ANNAL_UNAUTHENTICATED" },
  };
}

/**
 * The error `query` throws for a result with errors: a refusal (a 4xx of annal's catalog)
 * keeps its status, so an endpoint that lets it through answers what GraphQL would have
 * meant; anything else is the endpoint's own fault (its document), a 500.
 */
function graphqlFailed(result: ExecutionResult): AnnalError {
  const errors = (result.errors ?? []).map((error) => ({
    message: error.message,
    ...(error.path ? { path: error.path } : {}),
    ...(error.extensions ? { extensions: error.extensions } : {}),
  }));
  const refusal = errors
    .map((error) => {
      const code = error.extensions?.annalCode;
      return typeof code === "string" ? catalogEntry(code)?.status : undefined;
    })
    .find((status) => status !== undefined && status >= 400 && status < 500);
  const first = errors[0]!;
  return new AnnalError("ANNAL_ENDPOINT_GRAPHQL_FAILED", first.message, {
    ...(refusal === undefined ? {} : { status: refusal }),
    details: refusal === undefined ? {} : { errors },
  });
}
