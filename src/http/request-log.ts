import type { FastifyInstance, FastifyRequest } from "fastify";
import { redactUrl } from "../logger.ts";

/** Route label for requests no route matched (as the latency histogram labels them). */
const UNMATCHED = "(unmatched)";

/** A refusal (a 4xx, or a GraphQL error) met while answering a request: its code and message. */
interface Refusal {
  readonly code: string;
  readonly message: string;
}

const refusals = new WeakMap<FastifyRequest, Refusal>();

/**
 * Notes that answering `request` met a refusal (not a fault: those are logged with their
 * stack where they happen), so that the request's one line names its code and message rather
 * than a second line saying it. The first refusal of a request is the one named.
 */
export function noteRefusal(request: FastifyRequest, refusal: Refusal): void {
  if (!refusals.has(request)) refusals.set(request, refusal);
}

/**
 * One `info` line per answered request, in place of Fastify's two (`incoming request`,
 * `request completed`; the server's log controller sets `disableRequestLogging`): the method, the route
 * pattern, the URL (credentials in its query redacted), the status and the time taken in
 * milliseconds, with the request id the request's logger binds, and for a refusal its `code`
 * and `error` message (`noteRefusal`). A route's `logLevel` applies
 * (`/metrics` logs at `warn`, so a scraper adds no lines). At a terminal the line is just its
 * message (see `REQUEST_LINE_KEYS` in `logger.ts`).
 *
 * @example
 * {"level":"info","reqId":"…","method":"GET","route":"/api/users/:id","url":"/api/users/ada",
 *  "status":200,"ms":3.2,"msg":"GET /api/users/ada 200 3.2 ms"}
 */
export function logRequests(server: FastifyInstance): void {
  server.addHook("onResponse", async (request, reply) => {
    const url = redactUrl(request.url);
    const ms = Math.round(reply.elapsedTime * 10) / 10;
    const refusal = refusals.get(request);
    request.log.info(
      {
        method: request.method,
        route: request.routeOptions.url ?? UNMATCHED,
        url,
        status: reply.statusCode,
        ms,
        ...(refusal ? { code: refusal.code, error: refusal.message } : {}),
      },
      `${request.method} ${url} ${reply.statusCode} ${ms} ms${refusal ? ` ${refusal.code}: ${refusal.message}` : ""}`,
    );
  });
}
