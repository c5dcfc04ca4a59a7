import type { AnnalConfig } from "../config/index.ts";
import type { Pool } from "../db/index.ts";
import { causedWrites, startCaptureWorker } from "../capture/index.ts";
import { startHookWorkers, type HooksRegistry } from "../hooks/index.ts";
import type { Jobs } from "../jobs/index.ts";
import type { Logger } from "../logger.ts";
import type { EventStore } from "../store/index.ts";
import type { RunningDirectory } from "./directory.ts";
import { StartedParts, type Stoppable } from "./lifecycle.ts";

export interface WorkerOptions {
  readonly config: AnnalConfig;
  readonly pool: Pool;
  readonly store: EventStore;
  readonly directory: RunningDirectory;
  readonly jobs: Jobs;
  readonly hooks: HooksRegistry;
  readonly log: Logger;
}

/**
 * The background workers (`--only workers`), pg-boss job handlers: directory capture (a
 * scheduled job that runs in one process at a time across every annal process) and the
 * processing of accepted change events. Stopped after the HTTP server has closed and before
 * the jobs and the pool.
 */
export async function startWorkers(options: WorkerOptions): Promise<Stoppable> {
  const { config, pool, store, directory, jobs, hooks, log } = options;
  const parts = new StartedParts(log);
  try {
    if (directory.capture && config.directory) {
      const { capture } = config.directory;
      const worker = await startCaptureWorker(jobs, directory.capture, {
        source: capture.source,
        interval: capture.interval,
        reconcileInterval: capture.reconcileInterval,
        snapshotInterval: capture.snapshotInterval,
      });
      parts.add("capture", () => worker.stop());
    }
    const client = directory.client;
    const hookWorkers = await startHookWorkers({
      jobs,
      store,
      registry: hooks,
      log,
      ...(config.hooks ? { concurrency: config.hooks.concurrency } : {}),
      ...(client && config.directory
        ? {
            directory: {
              client,
              base: config.directory.base,
              // A provider's writes are noted with the change event as their cause, so the
              // change capture records is linked to it.
              causedBy: (cause) =>
                causedWrites(client, { pool, boundAs: config.directory!.bindDN, cause }),
            },
          }
        : {}),
    });
    parts.add("hook workers", () => hookWorkers.stop());
    return { stop: () => parts.stopAll() };
  } catch (error) {
    await parts.stopAll().catch(() => {});
    throw error;
  }
}
