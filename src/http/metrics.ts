import type { FastifyInstance } from "fastify";
import { httpDuration, metrics } from "../metrics.ts";

/** Label for requests no route matched, so that random paths cannot grow the label set. */
const UNMATCHED = "(unmatched)";

/**
 * `GET /metrics` in Prometheus text format, and every response's latency recorded in
 * `annal_http_request_duration_seconds` by method, route pattern (`/api/users/:id`, never
 * the raw URL) and status.
 */
export async function metricsRoutes(server: FastifyInstance): Promise<void> {
  server.get("/metrics", { logLevel: "warn" }, async (_request, reply) =>
    reply.type(metrics.contentType).send(await metrics.metrics()),
  );
}

export function recordHttpDuration(server: FastifyInstance): void {
  server.addHook("onResponse", async (request, reply) => {
    httpDuration.observe(
      {
        method: request.method,
        route: request.routeOptions.url ?? UNMATCHED,
        status: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
  });
}
