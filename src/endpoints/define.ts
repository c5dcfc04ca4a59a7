import type { MiddlewareHandler } from "hono";
import type { EndpointsContext } from "./context.ts";
import type { EndpointBindings } from "./bindings.ts";

/** A fetch handler as web routing frameworks have it: Hono's `app.fetch`, or your own. */
export interface FetchEndpoints {
  fetch(request: Request, env: EndpointBindings): Response | Promise<Response>;
}

/** The factory form: registers routes on `context.app` (a Hono application). */
export type EndpointsFactory = (context: EndpointsContext) => void | Promise<void>;

/** What `defineEndpoints` returns: the rules file's `endpoints` export. */
export interface Endpoints {
  readonly kind: "annal.endpoints";
  readonly definition: EndpointsFactory | FetchEndpoints;
}

/**
 * The rules file's custom endpoints, served under `/api` (`/hello` answers `GET /api/hello`).
 * Given a factory, annal calls it with the context (`app`, `env`, the utilities and Hono's
 * middleware) and serves the routes it adds to `app`; given an object with a `fetch` method
 * (a Hono application of your own), annal calls it with each request and the bindings as its
 * `env`. Every route needs an authenticated caller unless it names `publicRoute`.
 *
 * @example
 * export const endpoints = defineEndpoints(({ app, HTTPException }) => {
 *   app.get("/hello", (c) => {
 *     if (!c.env.viewer.has("read")) throw new HTTPException(403, { message: "read access needed" });
 *     return c.json({ hello: c.env.viewer.account?.name });
 *   });
 * });
 */
export function defineEndpoints(definition: EndpointsFactory | FetchEndpoints): Endpoints {
  return { kind: "annal.endpoints", definition };
}

/** True for what `defineEndpoints` returns, also from another copy of this module. */
export function isEndpoints(value: unknown): value is Endpoints {
  if (typeof value !== "object" || value === null) return false;
  const { kind, definition } = value as { kind?: unknown; definition?: unknown };
  return (
    kind === "annal.endpoints" &&
    (typeof definition === "function" ||
      (typeof definition === "object" &&
        definition !== null &&
        typeof (definition as { fetch?: unknown }).fetch === "function"))
  );
}

/** Marks a middleware as the declaration that a route needs no authentication. */
const PUBLIC = Symbol.for("annal.endpoints.publicRoute");

/**
 * Declares a route public: annal lets its requests in without credentials (`c.env.viewer`
 * is then anonymous and holds no access). Name it among the route's handlers, or `use` it
 * for a whole subtree. Credentials a request does carry are still read.
 *
 * @example
 * app.get("/status", publicRoute, (c) => c.json({ ok: true }));
 * app.use("/self-service/*", publicRoute);
 */
export const publicRoute: MiddlewareHandler = Object.assign(
  async (_c: unknown, next: () => Promise<void>) => {
    await next();
  },
  { [PUBLIC]: true },
);

/** Whether a route's handler is `publicRoute` (also as Hono wraps it in `app.route`). */
export function isPublicRoute(handler: unknown): boolean {
  if (typeof handler !== "function") return false;
  if ((handler as { [PUBLIC]?: unknown })[PUBLIC] === true) return true;
  const composed = (handler as { __COMPOSED_HANDLER?: unknown }).__COMPOSED_HANDLER;
  return composed !== undefined && isPublicRoute(composed);
}

/**
 * The `gql` tag: a GraphQL document as a string (editors and linters know it by its name).
 *
 * @example
 * const data = await c.env.query(gql`{ viewer { id dn } }`);
 */
export function gql(strings: TemplateStringsArray, ...values: readonly unknown[]): string {
  return strings.reduce(
    (text, part, i) => text + part + (i < values.length ? String(values[i]) : ""),
    "",
  );
}
