import type { FastifyInstance } from "fastify";
import { DATABASE_RETRY_AFTER_SECONDS } from "../errors/index.ts";
import { checkReadiness, type ReadinessOptions } from "./readiness.ts";

/**
 * `GET /healthz`: the process is up and serving (liveness; touches nothing else).
 * `GET /readyz`: 200 when ready to serve, else 503, with the report of `checkReadiness`; while
 * the database does not answer, with the `Retry-After` of the other channels' 503 for it.
 * Probes poll them every few seconds, so a successful probe is not logged.
 */
export function healthRoutes(readiness: ReadinessOptions) {
  return async (server: FastifyInstance): Promise<void> => {
    server.get("/healthz", { logLevel: "warn" }, () => ({ status: "ok" }));

    server.get("/readyz", { logLevel: "warn" }, async (_request, reply) => {
      const report = await checkReadiness(readiness);
      if (report.checks.database.status === "failed") {
        reply.header("retry-after", String(DATABASE_RETRY_AFTER_SECONDS));
      }
      return reply.code(report.status === "ready" ? 200 : 503).send(report);
    });
  };
}
