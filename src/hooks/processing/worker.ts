import type { JobResult, JobWithMetadata } from "pg-boss";
import type { Pool } from "../../db/index.ts";
import type { Jobs } from "../../jobs/index.ts";
import type { Logger } from "../../logger.ts";
import type { EventStore, NewEvent } from "../../store/index.ts";
import { causedBy, runAttempt, type AttemptOutcome } from "./attempt.ts";
import type { DirectoryAccess } from "./context.ts";
import { isPermanentFailure, PermanentFailure } from "../errors.ts";
import {
  CHANGE_EVENT,
  type ChangeEventAbandoned,
  type ChangeEventFailed,
  type ChangeEventProcessed,
  type ChangeEventReceived,
  type ChangeEventRef,
  type ProcessingError,
} from "../../events/index.ts";
import { sourceStream } from "../ingress/envelope.ts";
import { settleDeadJob, settled } from "./dead-letter.ts";
import {
  CHANGE_EVENTS_DEAD_LETTER_QUEUE,
  CHANGE_EVENTS_QUEUE,
  ensureChangeEventsQueue,
  LEGACY_CHANGE_EVENTS_QUEUE,
  type ChangeEventJob,
} from "./queue.ts";
import type { HooksRegistry } from "../definition/registry.ts";
import type { HookWorkflows } from "../definition/types.ts";

export interface HookWorkerOptions {
  readonly jobs: Jobs;
  readonly store: EventStore;
  readonly registry: HooksRegistry;
  readonly log: Logger;
  /** The directory providers may write to; without it `context.directory` is undefined. */
  readonly directory?: DirectoryAccess;
  /** The workflow engine providers may start and answer; without it `context.workflows` is undefined. */
  readonly workflows?: (ref: ChangeEventRef) => HookWorkflows;
  /** Change events processed at once by this process. Default 10 (`[hooks] concurrency`). */
  readonly concurrency?: number;
  /** How often an idle worker looks for jobs, in seconds (≥ 0.5). Default 1. */
  readonly pollingIntervalSeconds?: number;
}

export interface HookWorkers {
  stop(): Promise<void>;
}

/** Longest error message kept in an outcome event. */
const MAX_ERROR_MESSAGE = 2000;

/**
 * Processes accepted change events: one pg-boss job each, run by the provider of the hook that
 * accepted it, with retries and exponential backoff (the job's options, from the provider).
 * Every outcome is an event on the change event's stream, caused by its `ChangeEventReceived`:
 * `ChangeEventProcessed`, or `ChangeEventFailed` per failed attempt and `ChangeEventAbandoned`
 * when no attempt is left (a `PermanentFailure` skips the retries), which puts it under failed
 * work.
 *
 * Why not pg-boss's `transactional` workers: the provider may run for seconds (a directory
 * write), and a transaction open that long holds back the event log's safe bound, so every
 * projection would wait for it. Outcomes are appended in transactions of their own instead;
 * a crash between the provider's work and its outcome means one more attempt, which is why
 * providers must be idempotent.
 */
export async function startHookWorkers(options: HookWorkerOptions): Promise<HookWorkers> {
  const { jobs } = options;
  await ensureChangeEventsQueue(jobs);
  const concurrency = options.concurrency ?? 10;
  // One job per fetch, `concurrency` fetchers: a slot fetches again as soon as its own job
  // ends. A batch of `concurrency` jobs would fetch nothing until its slowest job ended, so
  // one provider call hanging until its timeout would stop every other subject meanwhile.
  // A slot that got a job fetches again at once while the queue's stats say jobs are ready
  // (more than one: `burstWhenReadyExceeds`), not a polling interval later: one job a second a
  // slot was the most a process could work (twenty a second for two processes, less than one
  // webhook sender delivers; the scale suite's backlog outlived its drain on a quiet machine).
  // A fetch that comes back empty ends the burst.
  const workOptions = {
    batchSize: 1,
    localConcurrency: concurrency,
    includeMetadata: true,
    perJobResults: true,
    pollingIntervalSeconds: options.pollingIntervalSeconds ?? 1,
    burstWhenReadyExceeds: 1,
  } as const;
  const process = (batch: JobWithMetadata<ChangeEventJob>[]) =>
    Promise.all(batch.map((job) => processJob(options, job)));
  const workers = [
    [
      CHANGE_EVENTS_QUEUE,
      await jobs.boss.work<ChangeEventJob, unknown, typeof workOptions>(
        CHANGE_EVENTS_QUEUE,
        workOptions,
        process,
      ),
    ],
    [
      CHANGE_EVENTS_DEAD_LETTER_QUEUE,
      await jobs.boss.work<ChangeEventJob, unknown, ReturnType<typeof deadLetterOptions>>(
        CHANGE_EVENTS_DEAD_LETTER_QUEUE,
        deadLetterOptions(options),
        async (batch) => {
          for (const job of batch) await settleDeadJob(options, job);
        },
      ),
    ],
  ] as const;
  const legacy = (await jobs.boss.getQueue(LEGACY_CHANGE_EVENTS_QUEUE))
    ? [
        [
          LEGACY_CHANGE_EVENTS_QUEUE,
          await jobs.boss.work<ChangeEventJob, unknown, typeof workOptions>(
            LEGACY_CHANGE_EVENTS_QUEUE,
            workOptions,
            process,
          ),
        ] as const,
      ]
    : [];
  return {
    stop: async () => {
      for (const [queue, id] of [...workers, ...legacy]) {
        await jobs.boss.offWork(queue, { id, wait: true });
      }
    },
  };
}

function deadLetterOptions(options: HookWorkerOptions) {
  return {
    batchSize: 10,
    includeMetadata: true,
    pollingIntervalSeconds: options.pollingIntervalSeconds ?? 1,
  } as const;
}

/**
 * Runs one attempt and records its outcome. Never throws: pg-boss settles each job of the
 * batch by what this returns.
 */
async function processJob(
  options: HookWorkerOptions,
  job: JobWithMetadata<ChangeEventJob>,
): Promise<JobResult> {
  const { store, registry } = options;
  try {
    const received = await readReceived(store.pool, job.data.receivedEventId);
    if (!received) {
      options.log.error(
        { job: job.id, receivedEventId: job.data.receivedEventId },
        "a change-event job names no ChangeEventReceived event; dropping it",
      );
      return { id: job.id, status: "deadletter" };
    }
    const ref: ChangeEventRef = {
      hook: received.data.hook,
      webhook: received.data.webhook,
      source: received.data.envelope.source,
      eventId: received.data.envelope.eventId,
      receivedEventId: received.id,
    };
    const attempt = job.data.priorAttempts + job.retryCount + 1;
    const log = options.log.child({
      hook: ref.hook,
      webhook: ref.webhook,
      source: ref.source,
      eventId: ref.eventId,
      attempt,
    });
    // A job pg-boss retries because its worker died (its heartbeat stopped) may have recorded
    // its outcome before it died, between the append and settling the job: that outcome
    // settles it, and the provider does not run a second time. Only a retried job can be in
    // that state, so a first attempt does not look.
    if (
      job.retryCount > 0 &&
      (await settled(store, ref.receivedEventId, ref.source, received.stream_version))
    ) {
      log.info("change event already processed by an attempt whose worker died; settled by it");
      return { id: job.id, status: "completed" };
    }
    const provider = registry.hook(ref.hook)?.provider;
    const outcome: AttemptOutcome = provider
      ? await runAttempt(
          provider,
          { ref, received: received.data, attempt, signal: job.signal },
          { store, log, directory: options.directory, workflows: options.workflows },
        )
      : {
          ok: false,
          writes: [],
          error: new PermanentFailure(
            `no hook named "${ref.hook}" is loaded (its hooks file was removed or renamed)`,
            { code: "ANNAL_HOOK_UNKNOWN" },
          ),
        };

    const record = (type: string, data: object): NewEvent => ({
      type,
      data,
      metadata: causedBy(ref),
      idempotencyKey: `change-event-outcome:${ref.receivedEventId}:${attempt}:${type}`,
    });
    if (outcome.ok) {
      const processed: ChangeEventProcessed = {
        ...ref,
        attempt,
        result: toJson(outcome.result),
        directoryWrites: outcome.writes,
      };
      await store.appendToStream(sourceStream(ref.source), [
        record(CHANGE_EVENT.processed, processed),
      ]);
      log.info("change event processed");
      return { id: job.id, status: "completed" };
    }

    const permanent = isPermanentFailure(outcome.error);
    const willRetry = !permanent && job.retryCount < job.retryLimit;
    const error = describe(outcome.error);
    const failed: ChangeEventFailed = {
      ...ref,
      attempt,
      error,
      permanent,
      willRetry,
      directoryWrites: outcome.writes,
    };
    const events = [record(CHANGE_EVENT.failed, failed)];
    if (!willRetry) {
      const abandoned: ChangeEventAbandoned = {
        ...ref,
        subject: received.data.envelope.subject,
        type: received.data.envelope.type,
        attempts: attempt,
        reason: permanent ? "permanent_failure" : "retries_exhausted",
        error,
      };
      events.push(record(CHANGE_EVENT.abandoned, abandoned));
    }
    await store.appendToStream(sourceStream(ref.source), events);
    log.warn(
      { code: error.code, permanent, willRetry },
      `processing the change event failed: ${error.message}`,
    );
    // An abandoned change event is settled: its outcome is in the log and it shows under
    // failed work. The job completes (rather than failing for good) so that it does not hold
    // its subject's key and stop the subject's later change events.
    return { id: job.id, status: willRetry ? "failed" : "completed", output: error };
  } catch (error) {
    // The outcome could not be recorded (the database went away): pg-boss retries the job.
    options.log.error(
      { err: error, job: job.id, receivedEventId: job.data.receivedEventId },
      "could not record a change event's processing; the job is retried",
    );
    return { id: job.id, status: "failed", output: describe(error) };
  }
}

interface ReceivedRow {
  id: string;
  stream_version: number;
  data: ChangeEventReceived;
}

async function readReceived(pool: Pool, id: string): Promise<ReceivedRow | undefined> {
  const result = await pool.query<ReceivedRow>(
    "SELECT id, stream_version::int, data FROM events WHERE id = $1 AND type = $2",
    [id, CHANGE_EVENT.received],
  );
  return result.rows[0];
}

function describe(error: unknown): ProcessingError {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return {
    code: typeof code === "string" ? code : null,
    message: message.slice(0, MAX_ERROR_MESSAGE),
  };
}

function toJson(value: unknown): unknown {
  if (value === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(value)) as unknown;
  } catch {
    return null;
  }
}
