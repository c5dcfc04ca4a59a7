import { Readable } from "node:stream";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Authentication, Caller } from "../auth/index.ts";
import type { AnnalConfig } from "../config/index.ts";
import type { GraphqlExecutor } from "../graphql/index.ts";
import { routeNotFound } from "../errors/index.ts";
import type { Logger } from "../logger.ts";
import type { EventStore } from "../store/index.ts";
import {
  contextBindings,
  currentBindings,
  requestBindings,
  type BindingServices,
} from "./bindings.ts";
import type { RulesModule } from "./load.ts";
import { createMailer } from "./messaging.ts";
import { buildEndpoints, type ServedEndpoints } from "./routes.ts";
import { createTemplating } from "./templating.ts";
import { watchRules, type RulesWatcher } from "./watch.ts";

/** The rules file as start-up prepared it (`prepareRules`). */
export interface PreparedRules {
  readonly file: string;
  /** Watch the file and its imports, and swap the routes when they change. */
  readonly development: boolean;
  /** The module loaded at start-up; undefined in development, where the watcher loads it. */
  readonly module: RulesModule | undefined;
}

export interface EndpointsPluginOptions {
  readonly rules: PreparedRules;
  readonly config: AnnalConfig;
  readonly store: EventStore;
  readonly authentication: Authentication;
  /** GraphQL as the caller (`graphqlPlugin(...).execute`); without it `query` fails. */
  readonly execute: GraphqlExecutor | undefined;
  readonly log: Logger;
}

const BODYLESS = new Set(["GET", "HEAD"]);

/**
 * The rules file's custom endpoints under `/api/*`, as a Fastify plugin: each request is
 * authenticated (unless its route is public), given its bindings, and handed to the rules'
 * Hono application as a web `Request`; its `Response` is sent as it is. annal's own paths
 * under `/api` are matched before this catch-all, and a rule that would take one of them
 * stops start-up (`ANNAL_RULES_ROUTE_CONFLICT`).
 *
 * @example
 * await server.register(endpointsPlugin({ rules, config, store, authentication, execute, log }));
 */
export function endpointsPlugin(options: EndpointsPluginOptions) {
  let served: ServedEndpoints | undefined;
  const plugin = async (server: FastifyInstance): Promise<void> => {
    const { rules, config } = options;
    const log = options.log.child({ module: "endpoints" }) as Logger;
    const templating = createTemplating(config.templating, { development: rules.development });
    const mailer = createMailer({
      config: config.messaging,
      store: options.store,
      templating,
      log,
    });
    const services: BindingServices = {
      config,
      logger: log,
      execute: options.execute,
      mailer,
      templating,
    };
    const env = contextBindings(services);

    let watcher: RulesWatcher | undefined;
    if (rules.module) {
      served = await buildEndpoints(rules.module, env);
      log.info({ file: rules.file, routes: served.routes }, "custom endpoints served under /api");
    } else {
      watcher = await watchRules(
        rules.file,
        async (module) => {
          // Built completely before it replaces what is served: a failure keeps the old routes.
          served = await buildEndpoints(module, env);
          log.info({ file: rules.file, routes: served.routes }, "custom endpoints swapped");
        },
        log,
      );
    }
    server.addHook("onClose", async () => {
      await watcher?.stop();
      mailer.close();
    });

    await server.register(async (scope) => {
      // The body stays a stream: the rule reads it (or not) as its route wants.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser("*", (_request, payload, done) => done(null, payload));
      scope.all("/api/*", async (request, reply) => {
        const current = served;
        if (!current) throw routeNotFound(request.method, request.url);
        const path = request.url.split("?")[0] ?? request.url;
        let caller: Caller | undefined;
        try {
          caller = await options.authentication.authenticate(request);
        } catch (error) {
          // A public route is answered without credentials (or with ones that fail).
          if (!current.isPublic(request.method, path)) throw error;
        }
        const bindings = requestBindings(services, {
          id: request.id,
          acceptLanguage: header(request, "accept-language"),
          log: request.log as unknown as Logger,
          remoteAddress: request.ip,
          caller,
        });
        const response = await currentBindings.run(bindings, () =>
          current.fetch(webRequest(request), bindings),
        );
        return reply.send(response);
      });
    });
  };
  return Object.assign(plugin, {
    /** The routes served now as OpenAPI path items, for the REST channel's description. */
    openApiPaths: (): Record<string, Record<string, unknown>> => served?.openApiPaths() ?? {},
  });
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

/** The Fastify request as a web `Request`, its body still unread. */
function webRequest(request: FastifyRequest): Request {
  const host = header(request, "host") ?? "localhost";
  const url = `${request.protocol}://${host}${request.url}`;
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const body = request.body;
  const init: RequestInit & { duplex?: "half" } = { method: request.method, headers };
  if (!BODYLESS.has(request.method) && body instanceof Readable) {
    init.body = Readable.toWeb(body) as ReadableStream<Uint8Array>;
    init.duplex = "half";
  }
  return new Request(url, init);
}
