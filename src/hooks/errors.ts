import { AnnalError, type ErrorCode } from "../errors/index.ts";

/**
 * The `error` values of the webhook's answers, exactly as the spec's table gives them, and
 * the catalog code of each (which holds the answer's status).
 */
export const WEBHOOK_ANSWERS = {
  invalid_request_body: "ANNAL_WEBHOOK_INVALID_REQUEST_BODY",
  authentication_required: "ANNAL_WEBHOOK_AUTHENTICATION_REQUIRED",
  authentication_failed: "ANNAL_WEBHOOK_AUTHENTICATION_FAILED",
  webhook_not_found: "ANNAL_WEBHOOK_WEBHOOK_NOT_FOUND",
  change_event_conflict: "ANNAL_WEBHOOK_CHANGE_EVENT_CONFLICT",
  request_too_large: "ANNAL_WEBHOOK_REQUEST_TOO_LARGE",
  rate_limit_exceeded: "ANNAL_WEBHOOK_RATE_LIMIT_EXCEEDED",
  change_ingress_unavailable: "ANNAL_WEBHOOK_CHANGE_INGRESS_UNAVAILABLE",
} as const satisfies Record<string, ErrorCode>;

export type WebhookAnswer = keyof typeof WEBHOOK_ANSWERS;

/**
 * A delivery the webhook refuses. The response is `{ "error": <answer> }` with the answer's
 * status and nothing more; `message` says why, for the log only (it never holds a header
 * value, a secret or a signature).
 */
export class WebhookRefusal extends AnnalError {
  readonly answer: WebhookAnswer;
  /** Seconds for `Retry-After` (429, 503). */
  readonly retryAfter: number | undefined;

  constructor(
    answer: WebhookAnswer,
    message: string,
    options: { retryAfter?: number; cause?: unknown } = {},
  ) {
    super(WEBHOOK_ANSWERS[answer], message, {
      cause: options.cause,
      headers: {
        // A 401 names how to authenticate (RFC 9110): a signature over the delivery.
        ...(answer === "authentication_required"
          ? { "www-authenticate": 'Signature realm="annal-webhooks"' }
          : {}),
        ...(options.retryAfter === undefined ? {} : { "retry-after": String(options.retryAfter) }),
      },
    });
    this.answer = answer;
    this.retryAfter = options.retryAfter;
  }
}

/** The same source and `eventId` arrived before with different content. Nothing is stored. */
export class ChangeEventConflictError extends WebhookRefusal {
  readonly source: string;
  readonly eventId: string;

  constructor(source: string, eventId: string) {
    super(
      "change_event_conflict",
      `change event ${source}/${eventId} was accepted before with different content`,
    );
    this.source = source;
    this.eventId = eventId;
  }
}

/**
 * A hooks file (or a `defineHooks` call) that annal cannot use: start-up stops. The message
 * names the file and what is wrong in it; it never repeats a secret.
 */
export class HooksInvalidError extends AnnalError {
  /** The hooks file, when the problem is in one. */
  readonly file: string | undefined;

  constructor(message: string, options: { file?: string; hint?: string; cause?: unknown } = {}) {
    super("ANNAL_HOOKS_INVALID", options.file ? `${options.file}: ${message}` : message, {
      hint:
        options.hint ??
        "fix the hooks file; each file's default export is defineHooks({ name, webhooks, provider }) (see src/hooks/README.md)",
      cause: options.cause,
    });
    this.file = options.file;
  }
}

/** A webhook's secret refers to an environment variable that is not set. */
export class HooksSecretMissingError extends AnnalError {
  readonly file: string | undefined;
  readonly variables: readonly string[];

  constructor(where: string, variables: readonly string[], file?: string) {
    super(
      "ANNAL_HOOKS_SECRET_MISSING",
      `${file ? `${file}: ` : ""}${where} has no secret: ${
        variables.length > 0
          ? `the environment variable${variables.length === 1 ? "" : "s"} ${variables.join(", ")} ${variables.length === 1 ? "is" : "are"} not set`
          : "every secret it refers to is empty"
      }`,
      { hint: `set ${variables.join(", ") || "the secret"} in the environment annal runs in` },
    );
    this.file = file;
    this.variables = variables;
  }
}

/** `[hooks] dir` names a directory that is not there. */
export class HooksDirectoryNotFoundError extends AnnalError {
  readonly dir: string;

  constructor(dir: string) {
    super("ANNAL_HOOKS_DIR_NOT_FOUND", `the hooks directory ${dir} does not exist`, {
      hint: "create it, correct [hooks] dir in annal.toml, or remove the [hooks] table to run without hooks",
    });
    this.dir = dir;
  }
}

const PERMANENT = Symbol.for("annal.hooks.permanentFailure");

/**
 * Thrown by a provider when processing a change event can never succeed (the person does not
 * exist, the change is not allowed): annal records the failure, skips the remaining retries
 * and lists the event under failed work, from where it can be retried once the cause is fixed.
 * Any other error is retried with exponential backoff.
 *
 * @example
 * if (!entry) throw new PermanentFailure(`no person ${uid} in the directory`, { code: "HR_UNKNOWN_EMPLOYEE" });
 */
export class PermanentFailure extends AnnalError {
  readonly [PERMANENT] = true;

  constructor(message: string, options: { code?: string; cause?: unknown } = {}) {
    super("ANNAL_HOOK_PERMANENT_FAILURE", message, {
      cause: options.cause,
      ...(options.code === undefined ? {} : { userCode: options.code }),
    });
  }
}

/**
 * True for a `PermanentFailure`, also one from another copy of annal's module (a hooks file
 * that resolved `annal` to a different path), which `instanceof` would not recognise.
 */
export function isPermanentFailure(error: unknown): boolean {
  return (
    typeof error === "object" &&
    error !== null &&
    (error as Record<symbol, unknown>)[PERMANENT] === true
  );
}

/** `failed-work retry <id>` names nothing under failed work. */
export class FailedWorkNotFoundError extends AnnalError {
  constructor(id: string) {
    super("ANNAL_FAILED_WORK_NOT_FOUND", `there is no failed work with id ${id}`, {
      status: 404,
      hint: "annal failed-work list shows the ids",
    });
  }
}

/** The failed work was processed successfully since: there is nothing to retry. */
export class FailedWorkResolvedError extends AnnalError {
  constructor(id: string) {
    super("ANNAL_FAILED_WORK_RESOLVED", `failed work ${id} has been processed since`, {
      status: 409,
      hint: "nothing to retry; annal failed-work list --state all shows its history",
    });
  }
}

/** The failed-work projection has not been built in this database yet. */
export class FailedWorkUnavailableError extends AnnalError {
  constructor(cause?: unknown) {
    super("ANNAL_FAILED_WORK_UNAVAILABLE", "the failed work list has not been built yet", {
      status: 503,
      hint: "start annal once (its projector builds the list), then try again",
      cause,
    });
  }
}
