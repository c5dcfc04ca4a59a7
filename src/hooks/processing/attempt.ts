import type { Logger } from "../../logger.ts";
import type { EventStore } from "../../store/index.ts";
import { recordingDirectory, withCause, type DirectoryAccess } from "./context.ts";
import type { ChangeEventReceived, ChangeEventRef } from "../../events/index.ts";
import { sourceStream } from "../ingress/envelope.ts";
import type { ResolvedProvider } from "../definition/registry.ts";
import type { DirectoryWrite, HookWorkflows, ProviderContext } from "../definition/types.ts";

export interface Attempt {
  readonly ref: ChangeEventRef;
  readonly received: ChangeEventReceived;
  readonly attempt: number;
  /** pg-boss's signal for the job (aborted when annal stops the worker). */
  readonly signal: AbortSignal;
}

export type AttemptOutcome =
  | { readonly ok: true; readonly result: unknown; readonly writes: readonly DirectoryWrite[] }
  | { readonly ok: false; readonly error: unknown; readonly writes: readonly DirectoryWrite[] };

/**
 * Runs the provider once for a change event, within its timeout, and says how it went. The
 * provider's time is bounded here, not only by pg-boss's expiry: a provider that never
 * settles would otherwise hold its whole batch, and with it the worker, forever.
 */
export async function runAttempt(
  provider: ResolvedProvider,
  attempt: Attempt,
  deps: {
    readonly store: EventStore;
    readonly log: Logger;
    readonly directory: DirectoryAccess | undefined;
    /** The workflow engine for this change event's provider, where this process runs it. */
    readonly workflows: ((ref: ChangeEventRef) => HookWorkflows) | undefined;
  },
): Promise<AttemptOutcome> {
  const { ref, received } = attempt;
  const writes: DirectoryWrite[] = [];
  const timeout = new AbortController();
  const timer = setTimeout(
    () => timeout.abort(timeoutError(provider.timeoutMs)),
    provider.timeoutMs,
  );
  const signal = AbortSignal.any([timeout.signal, attempt.signal]);
  const context: ProviderContext = {
    hook: ref.hook,
    webhook: ref.webhook,
    attempt: attempt.attempt,
    causationId: ref.receivedEventId,
    log: deps.log,
    store: deps.store,
    directory:
      deps.directory && recordingDirectory(withCause(deps.directory, causedBy(ref)), writes),
    workflows: deps.workflows?.(ref),
    signal,
    async record(event) {
      const { events } = await deps.store.appendToStream(sourceStream(ref.source), [
        {
          type: event.type,
          data: event.data,
          metadata: causedBy(ref),
          idempotencyKey: `change-event-record:${ref.receivedEventId}:${event.key ?? event.type}`,
        },
      ]);
      return events[0]!;
    },
  };
  try {
    const result = await untilAborted(
      Promise.resolve().then(() => provider.process(received.envelope, context)),
      signal,
    );
    return { ok: true, result, writes };
  } catch (error) {
    return { ok: false, error, writes };
  } finally {
    clearTimeout(timer);
  }
}

/** The metadata of everything a change event's processing records. */
export function causedBy(ref: ChangeEventRef) {
  return {
    causationId: ref.receivedEventId,
    correlationId: ref.receivedEventId,
    source: `webhook:${ref.hook}/${ref.webhook}`,
  };
}

function timeoutError(ms: number): Error {
  return Object.assign(new Error(`the provider did not finish within ${ms} ms`), {
    code: "ANNAL_HOOK_TIMEOUT",
  });
}

/** `work`'s outcome, or the signal's reason once it aborts (the work runs on, unheeded). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error as Error);
      },
    );
  });
}
