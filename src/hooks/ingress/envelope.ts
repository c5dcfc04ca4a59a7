import { createHash } from "node:crypto";
import { jsonDepth } from "./json-depth.ts";
import { z } from "zod";
import { WebhookRefusal } from "../errors.ts";
import type { ChangeEventEnvelope, MapResult } from "../definition/types.ts";

const SOURCE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
// Control characters would make ids unreadable in logs and listings.
const PRINTABLE = /^[^\p{Cc}]+$/u;

const printable = (max: number) =>
  z
    .string({ error: "expected a string" })
    .min(1, "must not be empty")
    .max(max, `must be at most ${max} characters`)
    .regex(PRINTABLE, "must not contain control characters");

const instant = z
  .union([z.date(), z.iso.datetime({ offset: true, error: "expected ISO 8601 with a time zone" })])
  .transform((value, ctx) => {
    const date = value instanceof Date ? value : new Date(value);
    if (Number.isNaN(date.getTime())) {
      ctx.addIssue({ code: "custom", message: "is not a valid time" });
      return z.NEVER;
    }
    return date.toISOString();
  });

const envelopeSchema = z.strictObject({
  source: z
    .string({ error: "expected a string" })
    .regex(SOURCE, "expected 1–100 letters, digits, ., _ or -"),
  eventId: printable(200),
  type: printable(200),
  subject: printable(1000),
  occurredAt: instant,
  data: z.unknown().optional(),
});

/**
 * Checks what `map` returned and brings each change event into its stored form: `occurredAt`
 * as ISO 8601 UTC, `data` as plain JSON (`{}` when absent).
 *
 * @throws WebhookRefusal 400 `invalid_request_body` when it is no valid change event (or
 *   none at all); 413 `request_too_large` over the webhook's envelope limits.
 */
export function normalizeEnvelopes(
  mapped: MapResult,
  limits: { envelopes: number; envelopeBytes: number; depth: number },
): { envelope: ChangeEventEnvelope; contentHash: string }[] {
  const list = (Array.isArray(mapped) ? mapped : [mapped]) as readonly unknown[];
  if (list.length === 0) {
    throw new WebhookRefusal("invalid_request_body", "map returned no change event");
  }
  if (list.length > limits.envelopes) {
    throw new WebhookRefusal(
      "request_too_large",
      `the body maps to ${list.length} change events, more than the webhook's limit of ${limits.envelopes}`,
    );
  }
  return list.map((item, index) => {
    const parsed = envelopeSchema.safeParse(item);
    if (!parsed.success) {
      const problems = parsed.error.issues.map(
        (issue) => `${issue.path.join(".") || "(the change event)"}: ${issue.message}`,
      );
      throw new WebhookRefusal(
        "invalid_request_body",
        `map returned an invalid change event at index ${index}: ${problems.join("; ")}`,
      );
    }
    const { data, ...rest } = parsed.data;
    const envelope: ChangeEventEnvelope = { ...rest, data: toJson(data ?? {}, index) };
    const canonical = canonicalJson(envelope);
    if (jsonDepth(canonical) > limits.depth) {
      throw new WebhookRefusal(
        "invalid_request_body",
        `change event ${index} nests deeper than the webhook's limit of ${limits.depth}`,
      );
    }
    if (Buffer.byteLength(canonical) > limits.envelopeBytes) {
      throw new WebhookRefusal(
        "request_too_large",
        `change event ${index} is larger than the webhook's limit of ${limits.envelopeBytes} bytes`,
      );
    }
    return { envelope, contentHash: sha256(canonical) };
  });
}

/** `data` as JSON gives it back: Dates become strings, undefined members go. */
function toJson(value: unknown, index: number): unknown {
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    throw new WebhookRefusal(
      "invalid_request_body",
      `map returned change event ${index} with data that is not JSON`,
    );
  }
}

/**
 * JSON with every object's keys sorted, so that equal content gives equal text whatever
 * order the keys were built in (and PostgreSQL's jsonb reorders them anyway).
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== "object" || Array.isArray(item)) return item;
    return Object.fromEntries(
      Object.entries(item as Record<string, unknown>).sort(([a], [b]) =>
        a < b ? -1 : a > b ? 1 : 0,
      ),
    );
  });
}

function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** The stream a source's change events, and everything their processing records, go to. */
export function sourceStream(source: string): string {
  return `source-${source}`;
}

/**
 * The idempotency key of a change event. Prefixed, so that no source name can collide with
 * the keys of change capture (`accesslog:...`); a source has no `:`, so the key is unambiguous.
 */
export function changeEventKey(source: string, eventId: string): string {
  return `change-event:${source}:${eventId}`;
}
