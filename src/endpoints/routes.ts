import path from "node:path";
import { Hono } from "hono";
import { PatternRouter } from "hono/router/pattern-router";
import {
  AnnalError,
  routeNotFound,
  problemOf,
  classifyError,
  PROBLEM_CONTENT_TYPE,
} from "../errors/index.ts";
import type { EndpointBindings } from "./bindings.ts";
import { endpointsContext, type EndpointsApp } from "./context.ts";
import { isPublicRoute, type FetchEndpoints } from "./define.ts";
import { endpointErrorResponse } from "./errors.ts";
import { failureAt, type RulesModule } from "./load.ts";
import { endpointPaths } from "./openapi.ts";

/**
 * The paths under `/api` that belong to annal: the REST channel's (its documentation and
 * OpenAPI description, entries, changes) and failed work. Reserved whether or not `[rest]`
 * serves them now, so that turning the REST channel on never takes a route from a rules file.
 */
export const ANNAL_API_PATHS: readonly string[] = [
  "/api",
  "/api.json",
  "/api.yaml",
  "/api/_docs/*",
  "/api/entries",
  "/api/entries/*",
  "/api/changes",
  "/api/failed-work",
  "/api/failed-work/*",
];

/** The rules file's routes, ready to serve. */
export interface ServedEndpoints {
  readonly file: string;
  /** Answers a request (its URL's path still begins with `/api`). */
  fetch(request: Request, env: EndpointBindings): Promise<Response>;
  /** Whether the route answering `method path` declared itself public. */
  isPublic(method: string, path: string): boolean;
  /** `METHOD path` of every route (middleware left out), for the log. */
  readonly routes: readonly string[];
  /** The routes as OpenAPI path items (`endpointPaths`); none for a plain fetch handler. */
  openApiPaths(): Record<string, Record<string, unknown>>;
}

interface RouteLike {
  readonly method: string;
  readonly path: string;
  readonly handler: unknown;
}

/** A Hono application (also of another copy of Hono): it lists its routes. */
function isHonoLike(value: unknown): value is Hono & FetchEndpoints {
  return (
    typeof value === "object" &&
    value !== null &&
    Array.isArray((value as { routes?: unknown }).routes) &&
    typeof (value as { fetch?: unknown }).fetch === "function"
  );
}

/**
 * Builds the rules file's routes: runs the factory on a fresh application (or takes the
 * `fetch` object), mounts it under `/api` and checks that none of its routes answers a path
 * of annal's.
 *
 * @throws AnnalError `ANNAL_RULES_INVALID` when the factory throws (at its line);
 *   `ANNAL_RULES_ROUTE_CONFLICT` naming the route and annal's path.
 */
export async function buildEndpoints(
  rules: RulesModule,
  env: EndpointBindings,
): Promise<ServedEndpoints> {
  const { definition } = rules.endpoints;
  const outer = new Hono<{ Bindings: EndpointBindings }>();
  outer.onError((error, c) => endpointErrorResponse(error, c.env.requestId, c.env.log));
  outer.notFound((c) => {
    const classified = classifyError(routeNotFound(c.req.method, c.req.url), c.env.requestId);
    return new Response(JSON.stringify(problemOf(classified)), {
      status: 404,
      headers: { "content-type": PROBLEM_CONTENT_TYPE },
    });
  });

  let app: (Hono & FetchEndpoints) | undefined;
  if (typeof definition === "function") {
    const own: EndpointsApp = new Hono();
    try {
      await definition(endpointsContext(own, env));
    } catch (error) {
      throw failureAt(rules.file, rules.locate, error, "its endpoints factory throws");
    }
    app = own as unknown as Hono & FetchEndpoints;
  } else if (isHonoLike(definition)) {
    app = definition;
  }
  if (app) {
    outer.route("/api", app as unknown as Hono<{ Bindings: EndpointBindings }>);
  } else {
    // A plain fetch handler lists no routes: it is asked for every other path under /api.
    const fetcher = definition as FetchEndpoints;
    outer.all("/api/*", (c) => {
      const url = new URL(c.req.url);
      url.pathname = url.pathname.slice("/api".length) || "/";
      return fetcher.fetch(new Request(url, c.req.raw), c.env);
    });
  }

  const routes = outer.routes.filter((route) => route.path.startsWith("/api"));
  if (app) checkPrecedence(rules.file, routes);
  const publicRoutes = new PatternRouter<true>();
  let anyPublic = false;
  for (const route of routes) {
    if (isPublicRoute(route.handler)) {
      publicRoutes.add(route.method.toUpperCase(), route.path, true);
      anyPublic = true;
    }
  }
  return {
    file: rules.file,
    fetch: async (request, bindings) => outer.fetch(request, bindings),
    isPublic(method, path) {
      if (!anyPublic) return false;
      const verb = method.toUpperCase() === "HEAD" ? "GET" : method.toUpperCase();
      return publicRoutes.match(verb, path)[0].length > 0;
    },
    routes: routes
      .filter((route) => !isMiddleware(route))
      .map((route) => `${route.method.toUpperCase()} ${route.path}`),
    openApiPaths() {
      if (!app) return {};
      return endpointPaths(routes, {
        file: path.basename(rules.file),
        isPublic: (method, route) => anyPublic && publicRoutes.match(method, route)[0].length > 0,
      });
    },
  };
}

/** A middleware (`app.use`, `publicRoute`): it passes the request on (Hono's own test). */
function isMiddleware(route: RouteLike): boolean {
  const handler = route.handler as { length: number; __COMPOSED_HANDLER?: { length: number } };
  return (handler.__COMPOSED_HANDLER ?? handler).length > 1;
}

/** A path that a pattern stands for: each parameter and wildcard as one segment. */
function samplePath(pattern: string): string {
  return (
    pattern
      .replace(/:[A-Za-z0-9_]+(\{[^}]*\})?\??/g, "x")
      .replace(/\*/g, "x")
      .replace(/\/+$/, "") || "/"
  );
}

/**
 * Refuses a route that could answer one of annal's paths, or that one of annal's paths
 * could answer: with two candidates for one request, which answers would depend on the
 * order things were registered in.
 */
function checkPrecedence(file: string, routes: readonly RouteLike[]): void {
  const annal = new PatternRouter<string>();
  for (const path of ANNAL_API_PATHS) annal.add("ALL", path, path);
  for (const route of routes) {
    if (isMiddleware(route)) continue;
    const own = new PatternRouter<true>();
    own.add("ALL", route.path, true);
    const shadowed =
      annal.match("GET", samplePath(route.path))[0][0]?.[0] ??
      ANNAL_API_PATHS.find((path) => own.match("GET", samplePath(path))[0].length > 0);
    if (shadowed !== undefined) {
      throw new AnnalError(
        "ANNAL_RULES_ROUTE_CONFLICT",
        `${file}: the route ${route.method.toUpperCase()} ${route.path} would answer ${shadowed}, which belongs to annal's REST channel`,
        { details: { file, route: route.path, method: route.method, annalPath: shadowed } },
      );
    }
  }
}
