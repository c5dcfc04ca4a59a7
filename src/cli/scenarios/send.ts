import { randomUUID } from "node:crypto";
import type { Queryable } from "../../db/index.ts";
import { AnnalError } from "../../errors/index.ts";
import {
  changeEventState,
  HooksSecretMissingError,
  loadHooks,
  signDelivery,
  type ChangeEventState,
} from "../../hooks/index.ts";

/** How often the processing state is read while waiting. */
const POLL_MS = 200;

/** A change event the webhook accepted. */
export interface Accepted {
  readonly source: string;
  readonly eventId: string;
  readonly stored: boolean;
}

/**
 * The secret webhook `<hook>/<webhook>` verifies signatures with, resolved from the hooks
 * files of the configuration as `annal start` resolves it (`${HR_WEBHOOK_SECRET:-…}` from this
 * environment): the first, the one a sender signs with during a rotation.
 *
 * @throws AnnalError `ANNAL_WEBHOOK_SECRET_MISSING` when the configuration loads no such
 *   webhook or its secret's variables are unset.
 */
export async function webhookSecret(
  hooksDir: string | undefined,
  hook: string,
  webhook: string,
): Promise<string> {
  let secrets: readonly string[] = [];
  try {
    const registry = await loadHooks({ dir: hooksDir });
    secrets = (await registry.webhook(hook, webhook)?.secrets()) ?? [];
  } catch (error) {
    if (!(error instanceof HooksSecretMissingError)) throw error;
    throw new AnnalError("ANNAL_WEBHOOK_SECRET_MISSING", error.message, {
      hint: "set the variables the hooks file's secrets name in this environment, as annal has them",
      cause: error,
    });
  }
  const secret = secrets[0];
  if (secret === undefined) {
    throw new AnnalError(
      "ANNAL_WEBHOOK_SECRET_MISSING",
      `the configuration's hooks ([hooks] dir) have no webhook ${hook}/${webhook} to sign for`,
      { hint: "run annal with the demo's hooks (ops/demo/hooks), as npm start does" },
    );
  }
  return secret;
}

/**
 * Posts `body` to `POST <url>/-hooks/<hook>/<webhook>`, signed as Standard Webhooks does.
 *
 * @throws AnnalError `ANNAL_WEBHOOK_REJECTED` with the HTTP status and annal's answer when it
 *   does not accept the change event; `ANNAL_WEBHOOK_UNREACHABLE` when annal cannot be reached.
 */
export async function postChangeEvent(
  url: string,
  target: { readonly hook: string; readonly webhook: string },
  secret: string,
  body: unknown,
): Promise<Accepted[]> {
  const text = JSON.stringify(body);
  const id = `msg_${randomUUID()}`;
  const timestamp = Math.floor(Date.now() / 1000);
  const endpoint = `${url}/-hooks/${target.hook}/${target.webhook}`;
  let response: Response;
  try {
    response = await fetch(endpoint, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "webhook-id": id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": signDelivery(secret, id, timestamp, text),
      },
      body: text,
    });
  } catch (error) {
    throw new AnnalError("ANNAL_WEBHOOK_UNREACHABLE", `could not reach ${endpoint}`, {
      hint: "is annal running? annal status says; or pass --url",
      cause: error,
    });
  }
  const answer = await response.text();
  if (response.status !== 202) {
    throw new AnnalError(
      "ANNAL_WEBHOOK_REJECTED",
      `${target.hook}/${target.webhook} answered HTTP ${response.status} ${answer}`,
      {
        hint:
          response.status === 403
            ? "the secret here is not the one annal runs with (HR_WEBHOOK_SECRET, TICKETS_WEBHOOK_SECRET), or the clocks differ"
            : "annal logs says why",
      },
    );
  }
  return (JSON.parse(answer) as { accepted: Accepted[] }).accepted;
}

/**
 * Waits until change event `source`/`eventId` is processed, reading its state every 200 ms
 * for up to `timeoutMs`; `progress` hears each new state (a retry, with its error).
 *
 * @throws AnnalError `ANNAL_SOURCE_CHANGE_FAILED` when its processing failed for good;
 *   `ANNAL_SOURCE_CHANGE_TIMEOUT` when it is not processed in time.
 */
export async function waitProcessed(
  db: Queryable,
  accepted: Accepted,
  timeoutMs: number,
  progress: (state: ChangeEventState) => void,
): Promise<Extract<ChangeEventState, { state: "processed" }>> {
  const name = `${accepted.source}/${accepted.eventId}`;
  const deadline = Date.now() + timeoutMs;
  let last = "";
  for (;;) {
    const state = (await changeEventState(db, accepted.source, accepted.eventId)) ?? {
      state: "received" as const,
    };
    const said = JSON.stringify(state);
    if (said !== last) progress(state);
    last = said;
    if (state.state === "processed") return state;
    if (state.state === "abandoned") {
      throw new AnnalError(
        "ANNAL_SOURCE_CHANGE_FAILED",
        `change event ${name} failed after ${state.attempts} attempt(s): ${state.error.code ?? "ERROR"}: ${state.error.message}`,
      );
    }
    if (Date.now() >= deadline) {
      throw new AnnalError(
        "ANNAL_SOURCE_CHANGE_TIMEOUT",
        `change event ${name} is not processed after ${timeoutMs / 1000} s (${state.state})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
