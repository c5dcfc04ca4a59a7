import { randomUUID } from "node:crypto";
import Fastify, { LogController, type FastifyBaseLogger } from "fastify";
import type { AnnalConfig } from "../config/index.ts";
import type { Pool } from "../db/index.ts";
import { readCaptureStatus } from "../capture/index.ts";
import type { Logger } from "../logger.ts";
import type { ProjectionStatus } from "../projector/index.ts";
import { frameworkErrorHandler, installErrorHandling } from "./error-handler.ts";
import { healthRoutes } from "./health.ts";
import { landingRoutes } from "./landing.ts";
import { clientErrorHandler, limitUrlLength, MAX_HEADER_SIZE } from "./limits.ts";
import { metricsRoutes, recordHttpDuration } from "./metrics.ts";
import { logRequests } from "./request-log.ts";

export interface ServerOptions {
  readonly config: AnnalConfig;
  readonly pool: Pool;
  /** The projections' status for `/readyz`: the running projector's, or read from the database. */
  readonly projectorStatus: () => Promise<readonly ProjectionStatus[]>;
  readonly log: Logger;
  /** Longest each `/readyz` check may take. Default 2000 ms. */
  readonly readinessTimeoutMs?: number;
  /**
   * Why the configured directory could not be used at start (annal then runs without it):
   * `/readyz` fails its capture check with it until a restart.
   */
  readonly directoryFailure?: unknown;
}

/**
 * annal's HTTP server, ready to `listen` (which the caller does): health, readiness and
 * metrics routes, the landing page at `/`, the latency histogram, and the one error mapping
 * to problem details.
 * Later channels (REST, GraphQL, webhooks, sign-in) register as plugins on the instance and
 * inherit all of it.
 *
 * @example
 * const server = createServer({ config, pool, projectorStatus: () => projector.status(), log });
 * const url = await server.listen({ host: config.server.host, port: config.server.port });
 */
export function createServer(options: ServerOptions) {
  const { pool, log } = options;
  // Typed as Fastify's logger interface, so the instance is a plain `FastifyInstance` that
  // plugins written against Fastify's default types accept.
  const loggerInstance: FastifyBaseLogger = log;
  const server = Fastify({
    loggerInstance,
    // One line per request (logRequests), not Fastify's two multi-line blocks.
    logController: new LogController({ disableRequestLogging: true }),
    // Errors raised before routing (a malformed URL) take the same problem-details path.
    frameworkErrors: frameworkErrorHandler,
    // Request ids are uuids, unique across processes and restarts: the log records them
    // (a mutation's DirectoryWriteRequested event does), so a counter would repeat.
    genReqId: () => randomUUID(),
    // Room for a URL up to annal's limit; past it the hook answers 414, past this the parser.
    http: { maxHeaderSize: MAX_HEADER_SIZE },
    clientErrorHandler: clientErrorHandler(log),
  });
  installErrorHandling(server);
  limitUrlLength(server);
  recordHttpDuration(server);
  logRequests(server);
  void server.register(
    healthRoutes({
      pool,
      projectorStatus: options.projectorStatus,
      ...(options.config.directory
        ? {
            captureStatus: () => readCaptureStatus(pool, options.config.directory!.capture.source),
          }
        : {}),
      ...(options.directoryFailure === undefined
        ? {}
        : { directoryFailure: options.directoryFailure }),
      timeoutMs: options.readinessTimeoutMs ?? 2000,
      log,
    }),
  );
  void server.register(metricsRoutes);
  void server.register(landingRoutes);
  return server;
}

export type AnnalServer = ReturnType<typeof createServer>;
