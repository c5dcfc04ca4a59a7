import type { ErrorCodeSpec } from "./spec.ts";

/**
 * The change-event webhook (spec 3): each refusal answers `{ "error": <answer> }` with the
 * spec's status; `ANNAL_WEBHOOK_<ANSWER>` is the same refusal as annal logs and codes it.
 */
export const WEBHOOK_CODES = {
  ANNAL_WEBHOOK_INVALID_REQUEST_BODY: {
    status: 400,
    meaning: "The body does not match the webhook's schema or maps to no valid envelope.",
  },
  ANNAL_WEBHOOK_AUTHENTICATION_REQUIRED: {
    status: 401,
    meaning: "The signature or timestamp header is missing.",
  },
  ANNAL_WEBHOOK_AUTHENTICATION_FAILED: {
    status: 403,
    meaning:
      "The signature is wrong for the raw body, secret or time, or the sender's clock is outside maxClockSkew.",
  },
  ANNAL_WEBHOOK_WEBHOOK_NOT_FOUND: {
    status: 404,
    meaning: "No hook or webhook has the name in the URL.",
  },
  ANNAL_WEBHOOK_CHANGE_EVENT_CONFLICT: {
    status: 409,
    meaning: "The same source and eventId arrived before with different content.",
  },
  ANNAL_WEBHOOK_REQUEST_TOO_LARGE: {
    status: 413,
    meaning: "The body or an envelope is over its limit.",
  },
  ANNAL_WEBHOOK_RATE_LIMIT_EXCEEDED: {
    status: 429,
    meaning: "Too many deliveries; wait the seconds in `Retry-After`, then resend.",
  },
  ANNAL_WEBHOOK_CHANGE_INGRESS_UNAVAILABLE: {
    status: 503,
    meaning:
      "The delivery could not be taken in now (secret, schema and map must finish within 5 seconds); resend later.",
  },
  ANNAL_HOOKS_INVALID: {
    status: 500,
    meaning: "A hooks file (or a defineHooks call) that annal cannot use.",
    hint: "fix the hooks file; each file's default export is defineHooks({ name, webhooks, provider })",
    surfaces: ["startup"],
  },
  ANNAL_HOOKS_SECRET_MISSING: {
    status: 500,
    meaning: "A webhook's secret refers to an environment variable that is not set.",
    surfaces: ["startup"],
  },
  ANNAL_HOOKS_DIR_NOT_FOUND: {
    status: 500,
    meaning: "`[hooks] dir` names a directory that is not there.",
    surfaces: ["startup"],
  },
  ANNAL_HOOK_PERMANENT_FAILURE: {
    status: 422,
    meaning: "A provider said processing a change event can never succeed (PermanentFailure).",
  },
  ANNAL_HOOK_TIMEOUT: { status: 504, meaning: "A provider did not finish within its timeout." },
  ANNAL_HOOK_UNKNOWN: {
    status: 500,
    meaning: "A change event names a hook that is no longer loaded.",
  },
  ANNAL_HOOK_ATTEMPT_LOST: {
    status: 500,
    meaning:
      "The last attempt ended without an outcome: its worker stopped, or could not record what happened.",
  },
  ANNAL_FAILED_WORK_NOT_FOUND: { status: 404, meaning: "No failed work has this id." },
  ANNAL_FAILED_WORK_RESOLVED: {
    status: 409,
    meaning: "The failed work was already resolved by a successful retry.",
  },
  ANNAL_FAILED_WORK_UNAVAILABLE: {
    status: 503,
    meaning: "Failed work cannot be read yet (its projection is not built).",
  },
  ANNAL_WEBHOOK_UNREACHABLE: {
    status: 502,
    meaning: "`annal hooks send` could not reach annal's webhook.",
  },
  ANNAL_WEBHOOK_REJECTED: {
    status: 502,
    meaning: "`annal hooks send`: the webhook did not accept the change event.",
  },
  ANNAL_WEBHOOK_SECRET_MISSING: {
    status: 400,
    meaning: "`annal hooks send` has no secret to sign with.",
    hint: "set WEBHOOK_SECRET (or the webhook's own secret variable)",
  },
} as const satisfies Record<string, ErrorCodeSpec>;
