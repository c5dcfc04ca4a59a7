import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { ERROR_CATALOG, classifyError, type ClassifiedError } from "../../errors/index.ts";
import { pipelinedPool } from "../../db/index.ts";
import type { Jobs } from "../../jobs/index.ts";
import type { EventStore } from "../../store/index.ts";
import { ChangeEventAcceptor } from "./accept.ts";
import {
  admitDelivery,
  checkDeliveryHeaders,
  withDeadline,
  type DeliveryHeaders,
} from "./delivery.ts";
import { WEBHOOK_ANSWERS, WebhookRefusal, type WebhookAnswer } from "../errors.ts";
import { discardRestOfBody } from "./discard.ts";
import { failedWorkRoutes } from "../failed-work/routes.ts";
import type { Authentication } from "../../auth/index.ts";
import { ensureChangeEventsQueue } from "../processing/queue.ts";
import type { HooksRegistry, ResolvedWebhook } from "../definition/registry.ts";

/** The spec's limit for the secret, schema and map steps of one delivery. */
export const INGRESS_STEPS_TIMEOUT_MS = 5_000;

export interface HooksPluginOptions {
  readonly registry: HooksRegistry;
  readonly store: EventStore;
  /** Started jobs: accepted change events are queued in the transaction that stores them. */
  readonly jobs: Jobs;
  /** Who may read and retry failed work over HTTP (`/api/failed-work`): operators. */
  readonly authentication: Authentication;
  /** Default 5000 (the spec's 5 seconds); tests shorten it. */
  readonly stepsTimeoutMs?: number;
  /** annal's clock, for the timestamp check. Default `Date.now`. */
  readonly now?: () => number;
}

/** What each delivery's `onRequest` check found, for its handler. */
const deliveries = new WeakMap<FastifyRequest, DeliveryHeaders>();

/**
 * The change-event webhook, `POST /-hooks/<hook>/<webhook>` for every loaded webhook, and the
 * failed-work JSON routes under `/api/failed-work`. Register it on the root instance, without
 * a prefix. It keeps its raw-body parser and its error answers (`{ "error": "<value>" }`, the
 * spec's table) to its own scope; the failed-work routes answer errors as the server does.
 *
 * A delivery goes: rate limit (429), signature headers present (401), delivery id and
 * timestamp within `maxClockSkew` (403) — all before the body is read — then the body within
 * `limits.bodyBytes` (413), then, within 5 seconds, the body as UTF-8 (400), the signature over
 * the raw bytes (403), JSON
 * and schema (400), `map` and the change events (400, 413), then the store (409, 503), and
 * 202 once the events and their jobs are committed.
 *
 * @example
 * await server.register(hooksPlugin({ registry, store, jobs, authentication }));
 */
export function hooksPlugin(options: HooksPluginOptions): FastifyPluginAsync {
  return async (server) => {
    await ensureChangeEventsQueue(options.jobs);
    // The webhook's transactions pipeline their statements, on connections of their own.
    const pool = pipelinedPool(options.store.pool, INGRESS_CONNECTIONS);
    server.addHook("onClose", () => pool.end());
    const acceptor = new ChangeEventAcceptor({ store: options.store, jobs: options.jobs, pool });
    await server.register(webhookRoutes(options, acceptor), { prefix: "/-hooks" });
    await server.register(failedWorkRoutes(options));
  };
}

/**
 * Connections for the webhook's transactions. One source's deliveries use one at a time (a
 * group commit), so this bounds how many sources commit at once in a process.
 */
const INGRESS_CONNECTIONS = 4;

function webhookRoutes(options: HooksPluginOptions, acceptor: ChangeEventAcceptor) {
  const now = options.now ?? Date.now;
  const stepsTimeoutMs = options.stepsTimeoutMs ?? INGRESS_STEPS_TIMEOUT_MS;
  return async (scope: FastifyInstance): Promise<void> => {
    // The signature is over the exact bytes: keep them, whatever the Content-Type says.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) =>
      done(null, body),
    );
    scope.setErrorHandler((error, request, reply) => answerError(error, request, reply));

    for (const hooks of options.registry.hooks) {
      for (const webhook of hooks.webhooks.values()) {
        scope.post(
          `/${hooks.name}/${webhook.name}`,
          {
            bodyLimit: webhook.limits.bodyBytes,
            onRequest: async (request) => {
              const wait = webhook.limiter?.take() ?? 0;
              if (wait > 0) {
                throw new WebhookRefusal(
                  "rate_limit_exceeded",
                  "the webhook's rate limit is reached",
                  {
                    retryAfter: wait,
                  },
                );
              }
              deliveries.set(request, checkDeliveryHeaders(webhook, request.headers, now()));
            },
          },
          async (request, reply) => {
            const accepted = await receive(acceptor, options, webhook, request, stepsTimeoutMs);
            return reply.code(202).send({ accepted });
          },
        );
      }
    }

    // Anything else under /-hooks, answered before its body is read.
    scope.all("/*", {
      onRequest: async () => {
        throw new WebhookRefusal("webhook_not_found", "no such hook or webhook");
      },
      handler: async () => undefined,
    });
  };
}

async function receive(
  acceptor: ChangeEventAcceptor,
  options: HooksPluginOptions,
  webhook: ResolvedWebhook,
  request: FastifyRequest,
  stepsTimeoutMs: number,
) {
  const delivery = deliveries.get(request)!;
  const rawBody = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const admitted = await withDeadline(stepsTimeoutMs, () =>
    admitDelivery(webhook, delivery, request.headers, rawBody),
  );
  const provider = options.registry.hook(webhook.hook)!.provider;
  const accepted = await acceptor.accept(
    { hook: webhook.hook, webhook: webhook.name, deliveryId: delivery.id, provider },
    admitted,
  );
  request.log.info(
    {
      hook: webhook.hook,
      webhook: webhook.name,
      deliveryId: delivery.id,
      stored: accepted.filter((a) => a.stored).length,
      repeated: accepted.filter((a) => !a.stored).length,
    },
    "change events accepted",
  );
  return accepted;
}

/**
 * Every failure of the webhook's scope answers `{ "error": <value> }` and nothing else: a
 * refusal with its own answer; a client error Fastify raises (the body over its limit, a
 * broken Content-Length) the table's nearest row; anything unexpected 503, since nothing was
 * stored and the sender resends. An answer given before the whole body arrived (413, or a
 * refusal from the headers) is given on a connection that reads the rest of the body.
 */
function answerError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const classified = classifyError(error, request.id);
  const own = ownAnswer(classified);
  let answer: WebhookAnswer;
  let headers = classified.headers;
  if (own) {
    answer = own;
    const log = answer === "change_ingress_unavailable" ? request.log.warn : request.log.info;
    const cause = (error as { cause?: unknown }).cause;
    log.call(
      request.log,
      { code: classified.code, status: classified.status, ...(cause ? { err: cause } : {}) },
      `webhook refused the delivery: ${classified.message}`,
    );
  } else if (classified.status >= 400 && classified.status < 500) {
    answer = classified.status === 413 ? "request_too_large" : "invalid_request_body";
    request.log.info({ status: classified.status, answer }, "webhook refused the delivery");
  } else {
    answer = "change_ingress_unavailable";
    headers = { ...headers, "retry-after": "5" };
    request.log.error(
      { err: error, code: classified.code },
      "webhook delivery failed unexpectedly",
    );
  }
  discardRestOfBody(request, reply);
  return reply
    .code(ERROR_CATALOG[WEBHOOK_ANSWERS[answer]].status)
    .headers(headers)
    .type("application/json; charset=utf-8")
    .send({ error: answer });
}

/** The answer a refusal names itself (by its catalog code), if it is one. */
function ownAnswer(classified: ClassifiedError): WebhookAnswer | undefined {
  return (Object.keys(WEBHOOK_ANSWERS) as WebhookAnswer[]).find(
    (answer) => WEBHOOK_ANSWERS[answer] === classified.kind,
  );
}
