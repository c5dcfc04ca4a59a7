import type { IncomingHttpHeaders } from "node:http";
import { jsonDepth } from "./json-depth.ts";
import { normalizeEnvelopes } from "./envelope.ts";
import { WebhookRefusal } from "../errors.ts";
import type { ResolvedWebhook } from "../definition/registry.ts";
import { verifyDelivery } from "../definition/signature.ts";
import type { ChangeEventEnvelope, MapResult } from "../definition/types.ts";

/** The signed parts of a delivery's headers, once `checkDeliveryHeaders` passed them. */
export interface DeliveryHeaders {
  readonly id: string;
  readonly timestamp: string;
}

const DELIVERY_ID = /^[\x21-\x7e]{1,256}$/;
const TIMESTAMP = /^\d{1,12}$/;

/**
 * What can be decided before the body is read: the signature headers are there (else 401), the
 * delivery id is sane and the timestamp within `maxClockSkew` of `now`, either way (else 403).
 */
export function checkDeliveryHeaders(
  webhook: ResolvedWebhook,
  headers: IncomingHttpHeaders,
  now: number,
): DeliveryHeaders {
  const id = header(headers, webhook.headers.id);
  const timestamp = header(headers, webhook.headers.timestamp);
  const signature = header(headers, webhook.headers.signature);
  if (id === undefined || timestamp === undefined || signature === undefined) {
    const missing = [
      id === undefined ? webhook.headers.id : undefined,
      timestamp === undefined ? webhook.headers.timestamp : undefined,
      signature === undefined ? webhook.headers.signature : undefined,
    ].filter((name) => name !== undefined);
    throw new WebhookRefusal("authentication_required", `missing header ${missing.join(", ")}`);
  }
  if (!DELIVERY_ID.test(id)) {
    throw new WebhookRefusal("authentication_failed", "the delivery id header is malformed");
  }
  if (!TIMESTAMP.test(timestamp)) {
    throw new WebhookRefusal("authentication_failed", "the timestamp header is not whole seconds");
  }
  const skewMs = Math.abs(now - Number(timestamp) * 1000);
  if (skewMs > webhook.maxClockSkewMs) {
    throw new WebhookRefusal(
      "authentication_failed",
      `the sender's clock is ${Math.round(skewMs / 1000)} s from ours, more than the ${webhook.maxClockSkewMs / 1000} s allowed`,
    );
  }
  return { id, timestamp };
}

/**
 * Reads a body's bytes as UTF-8, refusing any that are not. Decoding with U+FFFD in place of
 * bad bytes would make two different bodies one text, so the second delivery of an `eventId`
 * would pass as a replay of the first. A byte order mark stays in the text (and is not JSON).
 */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * The secret, schema and map steps: the body as UTF-8 (400, before the signature: a Standard
 * Webhooks library signs the text it decoded, so a sender of bytes that are not UTF-8 would
 * otherwise read a 403 as a wrong secret), the signature over the exact bytes received (403), the
 * body as JSON and against the webhook's schema (400), `map` and the change events it gives
 * (400, or 413 over the envelope limits). The caller bounds the whole with a deadline.
 */
export async function admitDelivery(
  webhook: ResolvedWebhook,
  delivery: DeliveryHeaders,
  headers: IncomingHttpHeaders,
  rawBody: Buffer,
): Promise<{ envelope: ChangeEventEnvelope; contentHash: string }[]> {
  let text: string;
  try {
    text = UTF8.decode(rawBody);
  } catch {
    throw new WebhookRefusal("invalid_request_body", "the body is not UTF-8");
  }
  const secrets = await webhook.secrets();
  if (secrets.length === 0) {
    throw new WebhookRefusal(
      "change_ingress_unavailable",
      "the webhook's secrets resolved to none",
    );
  }
  const signature = header(headers, webhook.headers.signature) ?? "";
  if (!verifyDelivery(secrets, delivery.id, delivery.timestamp, rawBody, signature)) {
    throw new WebhookRefusal(
      "authentication_failed",
      "no signature matches the body, timestamp and secrets",
    );
  }

  if (jsonDepth(text) > webhook.limits.depth) {
    throw new WebhookRefusal(
      "invalid_request_body",
      `the body nests deeper than the webhook's limit of ${webhook.limits.depth}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new WebhookRefusal("invalid_request_body", "the body is not JSON");
  }
  const validated = await webhook.body["~standard"].validate(json);
  if (validated.issues) {
    const problems = validated.issues.slice(0, 5).map((issue) => {
      const where = (issue.path ?? [])
        .map((p) => String(typeof p === "object" ? p.key : p))
        .join(".");
      return where === "" ? issue.message : `${where}: ${issue.message}`;
    });
    throw new WebhookRefusal(
      "invalid_request_body",
      `the body does not match the webhook's schema: ${problems.join("; ")}`,
    );
  }

  let mapped: MapResult;
  try {
    mapped = await webhook.map(validated.value);
  } catch (error) {
    throw new WebhookRefusal("invalid_request_body", `map failed: ${messageOf(error)}`, {
      cause: error,
    });
  }
  return normalizeEnvelopes(mapped, webhook.limits);
}

/** A header's value; a repeated header's values joined with a space (as signatures are). */
function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(" ") : value;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs `work` with a deadline: past it the delivery is answered 503
 * `change_ingress_unavailable` (the sender resends later; nothing was stored). The work itself
 * cannot be cancelled and runs on, its result unused.
 */
export async function withDeadline<T>(ms: number, work: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new WebhookRefusal(
            "change_ingress_unavailable",
            `the secret, schema and map steps did not finish within ${ms} ms`,
            { retryAfter: 5 },
          ),
        ),
      ms,
    );
  });
  try {
    return await Promise.race([work(), expired]);
  } finally {
    clearTimeout(timer);
  }
}
