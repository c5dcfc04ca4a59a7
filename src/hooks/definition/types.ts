import type { DirectoryClient } from "../../directory/index.ts";
import type { Logger } from "../../logger.ts";
import type { EventStore, RecordedEvent } from "../../store/index.ts";
import type { ChangeEventEnvelope, DirectoryWrite } from "../../events/index.ts";
import type { SchemaOutput, StandardSchemaV1 } from "../../schema/index.ts";

export type { ChangeEventEnvelope, DirectoryWrite, SchemaOutput, StandardSchemaV1 };

/** A duration: `"500ms"`, `"10s"`, `"5m"`, `"1h"` (as in annal.toml), or milliseconds. */
export type Duration = string | number;

/**
 * One change as `map` returns it. annal validates it, stores it as a `ChangeEventReceived`
 * event on the stream `source-<source>`, and hands it to the provider.
 */
export interface ChangeEventInput {
  /** The source system, e.g. `"hr"`: 1–100 letters, digits, `.`, `_` or `-`. */
  readonly source: string;
  /**
   * The source's own id of this change (1–200 characters), unique within the source. Sending it
   * again with the same content is harmless; with other content it is refused with 409.
   */
  readonly eventId: string;
  /** What happened, e.g. `"employee.updated"` (1–200 characters). */
  readonly type: string;
  /** What it happened to, e.g. the employee's id (1–1000 characters). */
  readonly subject: string;
  /** When it happened at the source: a Date, or ISO 8601 with a time zone. */
  readonly occurredAt: Date | string;
  /** The change itself: any JSON value. Default `{}`. */
  readonly data?: unknown;
}

export type MapResult = ChangeEventInput | readonly ChangeEventInput[];

/** Header names of a webhook's signature scheme; lower-case or not, they compare ignoring case. */
export interface SignatureHeaders {
  /** Default `webhook-id`: the delivery's id, part of the signed content. */
  readonly id?: string;
  /** Default `webhook-timestamp`: seconds since 1970, part of the signed content. */
  readonly timestamp?: string;
  /** Default `webhook-signature`: `v1,<base64>`, several separated by spaces. */
  readonly signature?: string;
}

export interface SignatureOptions {
  /**
   * The shared secrets a signature may be made with: each an environment reference,
   * `"${HR_WEBHOOK_SECRET}"` (or `"${NAME:-default}"`, for a demo). Several let you rotate:
   * list the new secret and the old one until every sender uses the new one. A reference
   * that comes out empty is skipped. A secret written `whsec_<base64>` (as Standard Webhooks
   * libraries generate them) is used as the bytes that base64 stands for.
   *
   * Or a function giving the secrets at request time (from a secret store); it counts
   * towards the 5 seconds the secret, schema and map steps have.
   */
  readonly secrets: readonly string[] | (() => readonly string[] | Promise<readonly string[]>);
  /** Default: Standard Webhooks' `webhook-id`, `webhook-timestamp`, `webhook-signature`. */
  readonly headers?: SignatureHeaders;
}

export interface WebhookLimits {
  /** Largest request body, in bytes. Default 256 KiB (262144). */
  readonly bodyBytes?: number;
  /** Most change events one request may map to. Default 100. */
  readonly envelopes?: number;
  /** Largest change event (its JSON), in bytes. Default 64 KiB (65536). */
  readonly envelopeBytes?: number;
  /**
   * Deepest nesting of arrays and objects in the body and in each change event. Default 64.
   * Deeper is 400 `invalid_request_body`: PostgreSQL cannot store JSON nested thousands deep.
   */
  readonly depth?: number;
}

export interface RateLimitOptions {
  /** Requests allowed per `per`, and the burst allowed at once. */
  readonly requests: number;
  readonly per: Duration;
}

/** What `http.webhook` takes; see `http.webhook`. */
export interface WebhookOptions<S extends StandardSchemaV1 = StandardSchemaV1> {
  /** The request body's schema: a body that does not match gets 400 `invalid_request_body`. */
  readonly body: S;
  readonly signature: SignatureOptions;
  /** How far the sender's clock may be from annal's, in either direction. Default `"5m"`. */
  readonly maxClockSkew?: Duration;
  readonly limits?: WebhookLimits;
  /**
   * Requests accepted per webhook and annal process; more get 429 `rate_limit_exceeded` with
   * `Retry-After`. Default 100 per second. `false`: no limit.
   */
  readonly rateLimit?: RateLimitOptions | false;
  /**
   * Turns a valid body into one change event or several. Throwing, or returning something
   * that is not a valid change event, answers 400 `invalid_request_body`.
   */
  readonly map: (body: SchemaOutput<S>) => MapResult | Promise<MapResult>;
}

/** A webhook as `http.webhook` returns it, for `defineHooks({ webhooks })`. */
export interface Webhook {
  readonly kind: "annal.webhook";
  readonly options: WebhookOptions;
}

/** How a provider's failures are retried (pg-boss, exponential backoff with jitter). */
export interface RetryOptions {
  /** Retries after the first attempt. Default 5. */
  readonly limit?: number;
  /** Delay before the first retry, doubling for each one after. Default `"10s"`; `"0"` retries at once. */
  readonly delay?: Duration;
  /** Longest delay between two attempts. Default `"1h"`. */
  readonly maxDelay?: Duration;
}

/**
 * The directory, as a provider may use it. Each write is recorded in the processing's outcome
 * event (`directoryWrites`), which carries the change event as its causation; pass
 * `{ as: <DN> }` to act as a person rather than as annal's own account.
 */
export type HookDirectory = Pick<
  DirectoryClient,
  "get" | "search" | "add" | "modify" | "modifyDN" | "delete"
> & {
  /** The configured base DN (`[directory] base`). */
  readonly base: string;
};

/** What a provider gets besides the change event. */
export interface ProviderContext {
  readonly hook: string;
  readonly webhook: string;
  /** 1 for the first attempt; counts on through retries, also those from failed work. */
  readonly attempt: number;
  /**
   * The id of the change event's `ChangeEventReceived` event. Everything this processing
   * causes carries it as `metadata.causationId` (`record` sets it), so the log answers "why
   * did this change".
   */
  readonly causationId: string;
  /** A logger bound to the hook, webhook, source and eventId. */
  readonly log: Logger;
  readonly store: EventStore;
  /** The directory, when annal has one configured; `undefined` otherwise. */
  readonly directory: HookDirectory | undefined;
  /** The workflow engine, where this process runs it; `undefined` otherwise. */
  readonly workflows: HookWorkflows | undefined;
  /** Aborted when the processing's time is up (`provider.timeout`) or annal stops. */
  readonly signal: AbortSignal;
  /**
   * Appends an event to the change event's stream, caused by it. Recording is idempotent per
   * change event and `key` (default: the type), so a retried attempt does not record twice.
   */
  record(event: { type: string; data: unknown; key?: string }): Promise<RecordedEvent>;
}

export interface ChangeEventProvider {
  /**
   * Processes one change event. Resolve when done (optionally with a small JSON summary,
   * recorded in `ChangeEventProcessed`); throw to fail: `PermanentFailure` for a failure no
   * retry can fix, anything else to be retried. May run more than once for one event (a
   * retry after a crash), so make it idempotent: set values rather than toggle them.
   */
  process(envelope: ChangeEventEnvelope, context: ProviderContext): unknown;
  readonly retry?: RetryOptions;
  /** Longest one attempt may run before it counts as failed. Default `"5m"`. */
  readonly timeout?: Duration;
}

export interface HooksOptions {
  /** The hook's name in the URL, `/-hooks/<name>/<webhook>`: letters, digits, `_`, `-`. */
  readonly name: string;
  /** The webhooks by name (the URL's last segment), each from `http.webhook({...})`. */
  readonly webhooks: Readonly<Record<string, Webhook>>;
  readonly provider: ChangeEventProvider;
}

/**
 * What a provider may ask of the workflow engine, idempotently: a change event retried starts
 * nothing twice and answers nothing twice.
 *
 * @example
 * if (envelope.type === "employee.hired") {
 *   await context.workflows?.start("joiner", { uid }, { key: "joiner" });
 * }
 * if (envelope.type === "ticket.done") await context.workflows?.answer(data.key, { serial });
 */
export interface HookWorkflows {
  /**
   * Starts the workflow `name` (its current version, or `version`) for this change event.
   * Starting it again for the same change event and `key` (default: the name) returns the
   * instance the first start made.
   */
  start(
    name: string,
    parameters: unknown,
    options?: { readonly key?: string; readonly version?: number },
  ): Promise<{ readonly instanceId: string; readonly created: boolean }>;
  /**
   * Answers a pending `flow.request`: the one whose key is `key` (the key the request's
   * binding was sent with), or the latest one the instance `instanceId` sent through its
   * binding `request`, for a source that was never sent the key but knows the instance (e.g.
   * from its own start). The same answer again is accepted and changes nothing; a refusal is
   * a `WF_*` error: `WF_NOT_FOUND` (no such request, or none sent yet), `WF_CONFLICT` (answered
   * otherwise, or its deadline passed), `WF_VALIDATION` (its schema refuses the answer).
   *
   * @example
   * await context.workflows?.answer({ instanceId: leaver, request: "hr" }, { rehired: true });
   */
  answer(
    target: string | { readonly instanceId: string; readonly request: string },
    answer: unknown,
  ): Promise<{ readonly instanceId: string; readonly recorded: boolean }>;
}

/** A hooks file's default export, from `defineHooks`. */
export interface Hooks {
  readonly kind: "annal.hooks";
  readonly name: string;
  readonly options: HooksOptions;
}
