import type { RestBackend } from "../../context.ts";
import { isEntry } from "../entry.ts";
import { BadUserInputError, RestBackendError } from "../../errors.ts";
import { authInfo } from "../../viewer.ts";
import { needAttribute, siteError, type DirectiveCompiler, type StepInput } from "./site.ts";

const KEYWORD = /^\$(parent|args|config|options|viewer)((?:\.[A-Za-z0-9_$-]+)*)$/;
const INTERPOLATION = /\{\{\s*(\$[A-Za-z0-9_.$-]+)\s*\}\}/g;
const REQUEST_KEYS = new Set(["method", "headers", "query", "body"]);
const METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]);

type Scope = Readonly<Record<string, unknown>>;

/** A value by dotted path; entries answer with their attribute (one value, or the list). */
function at(root: unknown, path: readonly string[]): unknown {
  let value = root;
  for (const segment of path) {
    if (value === null || value === undefined) return undefined;
    if (isEntry(value)) {
      const values = value.values(segment);
      value = values.length === 1 ? values[0] : values.length === 0 ? undefined : [...values];
    } else if (typeof value === "object") {
      value = Object.hasOwn(value, segment)
        ? (value as Record<string, unknown>)[segment]
        : undefined;
    } else {
      return undefined;
    }
  }
  return value;
}

function lookup(scope: Scope, expression: string): { found: boolean; value: unknown } {
  const match = KEYWORD.exec(expression);
  if (!match) return { found: false, value: undefined };
  const path = match[2] === "" ? [] : match[2]!.slice(1).split(".");
  return { found: true, value: at(scope[match[1]!], path) };
}

function asText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (Buffer.isBuffer(value)) return value.toString("base64");
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/**
 * Resolves the keywords of a request part: a string that is one keyword keeps the value's own
 * type (`"$args.ids"` sends the list); `{{ $keyword }}` inside a string is interpolated (and
 * passed through `encode`, which the endpoint uses to keep values inside one path segment).
 */
export function resolveKeywords(
  value: unknown,
  scope: Scope,
  encode: (text: string) => string = (t) => t,
): unknown {
  if (typeof value === "string") {
    const whole = lookup(scope, value.trim());
    if (whole.found) return whole.value;
    return value.replace(INTERPOLATION, (_, expression: string) =>
      encode(asText(lookup(scope, expression).value)),
    );
  }
  if (Array.isArray(value)) return value.map((item) => resolveKeywords(item, scope, encode));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, resolveKeywords(item, scope, encode)]),
    );
  }
  return value;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

function stringList(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value.map(asText) : [asText(value)];
}

/** The backend's error message: a JSON body's `message` or `error`, else the text, shortened. */
function backendMessage(text: string, statusText: string): string {
  try {
    const json = JSON.parse(text) as unknown;
    if (isPlainObject(json)) {
      const { message, error } = json;
      if (typeof message === "string") return message;
      if (typeof error === "string") return error;
      if (isPlainObject(error) && typeof error.message === "string") return error.message;
    }
  } catch {
    // not JSON
  }
  const trimmed = text.trim();
  return trimmed === "" ? statusText || "no message" : trimmed.slice(0, 500);
}

/** A value interpolated into the endpoint stays one path segment: `/` is escaped, `.`/`..` refused. */
function pathSegment(text: string): string {
  if (text === "." || text === "..") {
    throw new BadUserInputError("Invalid endpoint value", {
      hint: "a value interpolated into a REST endpoint cannot be . or ..",
    });
  }
  return encodeURIComponent(text);
}

function joinUrl(backend: RestBackend, endpoint: string): URL {
  const base = new URL(backend.base);
  const path =
    endpoint === ""
      ? ""
      : endpoint.startsWith("/") || endpoint.startsWith("?")
        ? endpoint
        : `/${endpoint}`;
  const url = new URL(`${backend.base.replace(/\/+$/, "")}${path}`);
  // The endpoint comes from the schema, but values interpolated into it come from clients:
  // whatever they hold, the request stays on the backend's origin and below its base path.
  if (url.origin !== base.origin || !url.pathname.startsWith(base.pathname.replace(/\/+$/, ""))) {
    throw new RestBackendError(
      backend.name,
      undefined,
      "the endpoint leaves the backend's base URL",
    );
  }
  return url;
}

/**
 * `@rest(backend, endpoint, request)`: calls a configured backend. The request merges the
 * backend's defaults (`headers`, `query`, `body`) with the directive's (which win); values may
 * use `$parent`, `$args`, `$config`, `$options` and `$viewer`. A failed request or a status
 * other than 2xx raises REST_BACKEND_FAILED with the status and the backend's message.
 */
export const rest: DirectiveCompiler = (site) => {
  const name = String(site.args.backend);
  const { restBackends, configValues } = site.environment;
  const backend = restBackends.find((candidate) => candidate.name === name);
  if (backend === undefined) {
    const known = restBackends.map((candidate) => candidate.name);
    throw siteError(
      site,
      `there is no REST backend named "${name}"`,
      known.length === 0
        ? "configure it in annal.toml: [[graphql.rest]] name = ..., base = ..."
        : `configured backends: ${known.join(", ")}`,
    );
  }
  const endpoint = String(site.args.endpoint ?? "");
  const request = site.args.request ?? {};
  if (!isPlainObject(request))
    throw siteError(site, "request must be an object { method, headers, query, body }");
  for (const key of Object.keys(request)) {
    if (!REQUEST_KEYS.has(key))
      throw siteError(
        site,
        `request has an unknown key ${key} (allowed: method, headers, query, body)`,
      );
  }
  const method = String(request.method ?? "GET").toUpperCase();
  if (!METHODS.has(method))
    throw siteError(site, `request method ${String(request.method)} is not an HTTP method`);
  // An entry parent is read with every attribute the schema names: `$parent.<attribute>` too.
  for (const match of JSON.stringify([endpoint, request]).matchAll(
    /\$parent\.([A-Za-z][A-Za-z0-9-]*)/g,
  )) {
    needAttribute(site, match[1]!);
  }
  return async (input: StepInput) => {
    const scope: Scope = {
      parent: input.parent,
      args: input.args,
      config: configValues,
      options: backend.options,
      viewer: authInfo(input.context.viewer),
    };
    const url = joinUrl(backend, String(resolveKeywords(endpoint, scope, pathSegment)));
    const query = { ...backend.query, ...(resolveKeywords(request.query ?? {}, scope) as object) };
    for (const [key, value] of Object.entries(query)) {
      for (const item of stringList(value)) url.searchParams.append(key, item);
    }
    const headers = new Headers();
    for (const [key, value] of Object.entries({
      ...backend.headers,
      ...(resolveKeywords(request.headers ?? {}, scope) as object),
    })) {
      for (const item of stringList(value)) headers.append(key, item);
    }
    const own = resolveKeywords(request.body, scope);
    const defaults = resolveKeywords(backend.body, scope);
    const body =
      isPlainObject(own) && isPlainObject(defaults) ? { ...defaults, ...own } : (own ?? defaults);
    const sendsBody = body !== undefined && method !== "GET" && method !== "HEAD";
    if (sendsBody && !headers.has("content-type")) headers.set("content-type", "application/json");
    if (!headers.has("accept")) headers.set("accept", "application/json");

    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        method,
        headers,
        body: sendsBody ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(backend.timeoutMs),
        redirect: "error",
      });
      text = await response.text();
    } catch (error) {
      const reason =
        error instanceof Error && error.name === "TimeoutError"
          ? `no answer within ${backend.timeoutMs} ms`
          : (error as Error).message;
      throw new RestBackendError(backend.name, undefined, reason, error);
    }
    if (!response.ok) {
      throw new RestBackendError(
        backend.name,
        response.status,
        backendMessage(text, response.statusText),
      );
    }
    if (text === "") return null;
    const type = response.headers.get("content-type") ?? "";
    if (type.includes("json")) {
      try {
        return JSON.parse(text) as unknown;
      } catch (error) {
        throw new RestBackendError(
          backend.name,
          response.status,
          "the answer is not valid JSON",
          error,
        );
      }
    }
    return text;
  };
};
