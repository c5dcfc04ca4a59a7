import { z } from "zod";
import { formatKeyPath, isEnvReference, parseDuration } from "../../config/index.ts";
import { HooksInvalidError } from "../errors.ts";
import { STANDARD_HEADERS } from "./signature.ts";
import type {
  Hooks,
  HooksOptions,
  MapResult,
  StandardSchemaV1,
  Webhook,
  WebhookOptions,
} from "./types.ts";

/** Names in the URL: `/-hooks/<hook>/<webhook>`. */
const URL_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;
/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;

export const WEBHOOK_DEFAULTS = {
  maxClockSkewMs: 5 * 60_000,
  bodyBytes: 256 * 1024,
  envelopes: 100,
  envelopeBytes: 64 * 1024,
  depth: 64,
  rateLimit: { requests: 100, perMs: 1000 },
} as const;

export const RETRY_DEFAULTS = { limit: 5, delayMs: 10_000, maxDelayMs: 3_600_000 } as const;
export const PROVIDER_TIMEOUT_MS = 5 * 60_000;

function duration(options: { allowZero?: boolean; max?: number } = {}) {
  const expected = `expected a duration such as "500ms", "10s", "5m", "1h", "1w" or "PT5M", or milliseconds`;
  return z.union([z.string(), z.number()], { error: expected }).transform((value, ctx) => {
    let ms: number;
    try {
      ms = typeof value === "number" ? value : parseDuration(value);
    } catch {
      ctx.addIssue({ code: "custom", message: expected });
      return z.NEVER;
    }
    if (!Number.isSafeInteger(ms) || ms < 0 || (ms === 0 && options.allowZero !== true)) {
      ctx.addIssue({ code: "custom", message: `${expected}, longer than 0` });
      return z.NEVER;
    }
    if (options.max !== undefined && ms > options.max) {
      ctx.addIssue({ code: "custom", message: `must be at most ${options.max} ms` });
      return z.NEVER;
    }
    return ms;
  });
}

function count(min: number, max: number) {
  const expected = `expected a whole number from ${min} to ${max}`;
  return z.number({ error: expected }).int(expected).min(min, expected).max(max, expected);
}

const secretReference = z.string({ error: "expected a string" }).refine(isEnvReference, {
  message:
    'must be an environment reference such as "${HR_WEBHOOK_SECRET}", never the secret itself',
});

const headerName = z
  .string({ error: "expected a header name" })
  .regex(HEADER_NAME, "expected a header name such as webhook-signature")
  .transform((name) => name.toLowerCase());

const standardSchema = z.custom<StandardSchemaV1>(
  (value) =>
    typeof value === "object" &&
    value !== null &&
    typeof (value as { "~standard"?: { validate?: unknown } })["~standard"]?.validate ===
      "function",
  {
    message: "expected a schema (zod, valibot, arktype: any Standard Schema), e.g. z.object({...})",
  },
);

const fn = <T>(what: string) =>
  z.custom<T>((value) => typeof value === "function", { message: `expected ${what}` });

const webhookSettings = z
  .strictObject(
    {
      body: standardSchema,
      signature: z.strictObject(
        {
          secrets: z.union(
            [
              z.array(secretReference).min(1, "list at least one secret"),
              fn<() => readonly string[] | Promise<readonly string[]>>(
                "a list of environment references, or a function returning the secrets",
              ),
            ],
            { error: 'expected a list such as ["${HR_WEBHOOK_SECRET}"], or a function' },
          ),
          headers: z
            .strictObject(
              {
                id: headerName.default(STANDARD_HEADERS.id),
                timestamp: headerName.default(STANDARD_HEADERS.timestamp),
                signature: headerName.default(STANDARD_HEADERS.signature),
              },
              { error: "expected { id, timestamp, signature } header names" },
            )
            .prefault({})
            .refine((h) => new Set([h.id, h.timestamp, h.signature]).size === 3, {
              message: "the id, timestamp and signature headers must be three different headers",
            }),
        },
        { error: "expected { secrets, headers? }" },
      ),
      maxClockSkew: duration({ max: 24 * 3_600_000 }).default(WEBHOOK_DEFAULTS.maxClockSkewMs),
      limits: z
        .strictObject(
          {
            bodyBytes: count(1, 64 * 1024 * 1024).default(WEBHOOK_DEFAULTS.bodyBytes),
            envelopes: count(1, 10_000).default(WEBHOOK_DEFAULTS.envelopes),
            envelopeBytes: count(1, 64 * 1024 * 1024).default(WEBHOOK_DEFAULTS.envelopeBytes),
            depth: count(2, 1_000).default(WEBHOOK_DEFAULTS.depth),
          },
          { error: "expected { bodyBytes?, envelopes?, envelopeBytes?, depth? }" },
        )
        .prefault({}),
      rateLimit: z
        .union(
          [
            z.literal(false),
            z.strictObject({ requests: count(1, 1_000_000), per: duration() }).transform((r) => ({
              requests: r.requests,
              perMs: r.per,
            })),
          ],
          { error: 'expected { requests, per } such as { requests: 100, per: "1s" }, or false' },
        )
        .default(WEBHOOK_DEFAULTS.rateLimit),
      map: fn<(body: unknown) => MapResult | Promise<MapResult>>("a function map(body)"),
    },
    { error: "expected http.webhook({ body, signature, map, ... })" },
  )
  .transform((w) => ({ ...w, maxClockSkewMs: w.maxClockSkew }));

const webhook = z
  .object(
    {
      kind: z.literal("annal.webhook", { error: "expected http.webhook({...})" }),
      options: webhookSettings,
    },
    { error: "expected http.webhook({...})" },
  )
  .transform((w) => w.options);

const hooksSettings = z.strictObject(
  {
    name: z
      .string({ error: "expected a string" })
      .regex(URL_NAME, "expected 1–63 letters, digits, _ or - (it is part of the URL)"),
    webhooks: z
      .record(
        z.string().regex(URL_NAME, "a webhook's name is 1–63 letters, digits, _ or -"),
        webhook,
        { error: "expected { <name>: http.webhook({...}) }" },
      )
      .refine((w) => Object.keys(w).length > 0, { message: "define at least one webhook" }),
    provider: z.strictObject(
      {
        process: fn<HooksOptions["provider"]["process"]>("a function process(envelope, context)"),
        retry: z
          .strictObject(
            {
              limit: count(0, 100).default(RETRY_DEFAULTS.limit),
              delay: duration({ allowZero: true }).default(RETRY_DEFAULTS.delayMs),
              maxDelay: duration().default(RETRY_DEFAULTS.maxDelayMs),
            },
            { error: "expected { limit?, delay?, maxDelay? }" },
          )
          .prefault({}),
        timeout: duration({ max: 24 * 3_600_000 }).default(PROVIDER_TIMEOUT_MS),
      },
      { error: "expected a provider { process(envelope, context) { ... } }" },
    ),
  },
  { error: "expected defineHooks({ name, webhooks, provider })" },
);

export type WebhookSettings = z.output<typeof webhookSettings>;
export type HooksSettings = z.output<typeof hooksSettings>;

/** Checks `defineHooks` options and resolves their defaults. */
export function parseHooksOptions(options: unknown): HooksSettings {
  const result = hooksSettings.safeParse(options);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const key = formatKeyPath(issue.path.filter((p) => p !== "options"));
    return key === "" ? issue.message : `${key}: ${issue.message}`;
  });
  throw new HooksInvalidError(problems.join("; "));
}

/**
 * A hooks file's default export: the hook `name` (the URL's `/-hooks/<name>/...`), its
 * webhooks, and the provider that processes the change events they accept. Checks everything
 * when called, so a mistake stops start-up naming the file and the option.
 *
 * @example
 * export default defineHooks({
 *   name: "hr",
 *   webhooks: {
 *     employees: http.webhook({
 *       body: z.object({ id: z.string(), uid: z.string(), title: z.string(), at: z.iso.datetime() }),
 *       signature: { secrets: ["${HR_WEBHOOK_SECRET}"] },
 *       map: (b) => ({ source: "hr", eventId: b.id, type: "employee.updated", subject: b.uid, occurredAt: b.at, data: { title: b.title } }),
 *     }),
 *   },
 *   provider: {
 *     async process(envelope, context) {
 *       context.log.info({ subject: envelope.subject }, "employee changed");
 *     },
 *   },
 * });
 *
 * @throws HooksInvalidError `ANNAL_HOOKS_INVALID` naming each option that is wrong.
 */
export function defineHooks(options: HooksOptions): Hooks {
  const settings = parseHooksOptions(options);
  return { kind: "annal.hooks", name: settings.name, options };
}

/** Webhook builders for `defineHooks({ webhooks })`. */
export const http = {
  /**
   * A signed JSON webhook at `POST /-hooks/<hook>/<name>`. Signatures follow Standard
   * Webhooks: HMAC-SHA256 over `<id>.<timestamp>.<raw body>` with a shared secret, sent as
   * `v1,<base64>` in `webhook-signature` (header names configurable), the timestamp within
   * `maxClockSkew` of annal's clock.
   *
   * @example
   * http.webhook({
   *   body: z.object({ id: z.string(), employee: z.object({ uid: z.string() }) }),
   *   signature: { secrets: ["${HR_WEBHOOK_SECRET}", "${HR_WEBHOOK_SECRET_PREVIOUS:-}"] },
   *   rateLimit: { requests: 20, per: "1s" },
   *   map: (body) => ({ source: "hr", eventId: body.id, ... }),
   * })
   */
  webhook<S extends StandardSchemaV1>(options: WebhookOptions<S>): Webhook {
    return { kind: "annal.webhook", options: options as unknown as WebhookOptions };
  },
};

/** True for what `defineHooks` returns, also from another copy of this module. */
export function isHooks(value: unknown): value is Hooks {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { kind?: unknown }).kind === "annal.hooks"
  );
}
