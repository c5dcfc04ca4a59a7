import { parse as parseCsv } from "csv-parse/sync";
import { stringify as stringifyCsv } from "csv-stringify/sync";
import type { Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { deleteCookie, getCookie, getSignedCookie, setCookie, setSignedCookie } from "hono/cookie";
import { cors } from "hono/cors";
import { etag } from "hono/etag";
import { HTTPException } from "hono/http-exception";
import { ipRestriction } from "hono/ip-restriction";
import { prettyJSON } from "hono/pretty-json";
import { secureHeaders } from "hono/secure-headers";
import { stream, streamSSE, streamText } from "hono/streaming";
import { timeout } from "hono/timeout";
import { endTime, setMetric, startTime, timing } from "hono/timing";
import iconv from "iconv-lite";
import * as v from "valibot";
import type { EndpointBindings } from "./bindings.ts";
import { gql, publicRoute } from "./define.ts";
import { vValidator } from "./validator.ts";

/** The Hono application of the rules file: its handlers see the bindings as `c.env`. */
export type EndpointsApp = Hono<{ Bindings: EndpointBindings }>;

/** CSV: csv-stringify and csv-parse, synchronous (a report is built, then sent). */
export const csv = { stringify: stringifyCsv, parse: parseCsv };

/** What the factory form of `defineEndpoints` is given. */
export interface EndpointsContext {
  /** The router application: add routes to it (`app.get("/hello", ...)`, `app.route(path, module)`). */
  readonly app: EndpointsApp;
  /** The bindings: the process's at once, the request's (`viewer`, `query`, ...) inside a handler. */
  readonly env: EndpointBindings;
  /** Declares a route public (no credentials needed). */
  readonly publicRoute: typeof publicRoute;
  readonly gql: typeof gql;
  /** valibot. */
  readonly v: typeof v;
  /** valibot validation of `json`, `form` or `query` (also `param`, `header`, `cookie`). */
  readonly vValidator: typeof vValidator;
  readonly csv: typeof csv;
  /** iconv-lite: `iconv.encode(text, "windows-1252")`. */
  readonly iconv: typeof iconv;
  readonly HTTPException: typeof HTTPException;
  readonly cors: typeof cors;
  readonly secureHeaders: typeof secureHeaders;
  readonly prettyJSON: typeof prettyJSON;
  readonly timeout: typeof timeout;
  readonly bodyLimit: typeof bodyLimit;
  readonly etag: typeof etag;
  readonly ipRestriction: typeof ipRestriction;
  /** The connection's addresses for `ipRestriction(getConnInfo, { ... })`. */
  readonly getConnInfo: typeof getConnInfo;
  readonly timing: typeof timing;
  readonly startTime: typeof startTime;
  readonly endTime: typeof endTime;
  readonly setMetric: typeof setMetric;
  readonly getCookie: typeof getCookie;
  readonly setCookie: typeof setCookie;
  readonly deleteCookie: typeof deleteCookie;
  readonly getSignedCookie: typeof getSignedCookie;
  readonly setSignedCookie: typeof setSignedCookie;
  readonly stream: typeof stream;
  readonly streamText: typeof streamText;
  readonly streamSSE: typeof streamSSE;
}

/** The connection info Hono's adapters give, from the request's bindings. */
export function getConnInfo(c: Context<{ Bindings: EndpointBindings }>) {
  const address = c.env.remoteAddress;
  return {
    remote: {
      address,
      addressType:
        address === undefined
          ? undefined
          : address.includes(":")
            ? ("IPv6" as const)
            : ("IPv4" as const),
    },
  };
}

/** The context of the factory, around its app and bindings. */
export function endpointsContext(app: EndpointsApp, env: EndpointBindings): EndpointsContext {
  return {
    app,
    env,
    publicRoute,
    gql,
    v,
    vValidator,
    csv,
    iconv,
    HTTPException,
    cors,
    secureHeaders,
    prettyJSON,
    timeout,
    bodyLimit,
    etag,
    ipRestriction,
    getConnInfo,
    timing,
    startTime,
    endTime,
    setMetric,
    getCookie,
    setCookie,
    deleteCookie,
    getSignedCookie,
    setSignedCookie,
    stream,
    streamText,
    streamSSE,
  };
}
