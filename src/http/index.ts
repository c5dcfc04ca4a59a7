/**
 * The HTTP server: Fastify with annal's logger, `/healthz`, `/readyz`, `/metrics`, request
 * latency, and RFC 9457 problem details for every error.
 */
export { createServer, type AnnalServer, type ServerOptions } from "./server.ts";
export { MAX_URL_LENGTH } from "./limits.ts";
export { logClassified, sendProblem } from "./problem.ts";
export {
  checkReadiness,
  DatabaseUnreachableError,
  pingDatabase,
  type ReadinessReport,
} from "./readiness.ts";
