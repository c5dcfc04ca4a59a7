import { startReviewSchedule } from "../reviews/index.ts";
import { causedWrites, retireCaptureQueue, startCaptureWorker } from "../capture/index.ts";
import { startHookWorkers } from "../hooks/index.ts";
import { startWorkflowEngine, workflowsForChangeEvent } from "../workflow/index.ts";
import { allProjections } from "./projections.ts";
import { startPeriodicRetention } from "./retention.ts";
import type { Services } from "./services.ts";
import { StartedParts, type Stoppable } from "./lifecycle.ts";

/**
 * The background workers (`--only workers`): directory capture (a pass every interval, in one
 * process at a time across every annal process, the one holding capture's lock), and the
 * pg-boss job handlers of the processing of accepted change events and of the workflow
 * engine. Stopped after the HTTP server has closed and before the jobs and the pool.
 */
export async function startWorkers(options: Services): Promise<Stoppable> {
  const { config, pool, store, directory, jobs, hooks, log } = options;
  const parts = new StartedParts(log);
  try {
    await retireCaptureQueue(jobs);
    if (directory.capture && config.directory) {
      const { capture } = config.directory;
      const worker = await startCaptureWorker(directory.capture, {
        source: capture.source,
        interval: capture.interval,
        reconcileInterval: capture.reconcileInterval,
        snapshotInterval: capture.snapshotInterval,
        // Periodic snapshots keep pace with every projection, wherever its projector runs.
        paceBy: allProjections(config).map((projection) => projection.name),
      });
      parts.add("capture", () => worker.stop());
    }
    const client = directory.client;
    const engineDeps = options.engine;
    const hookWorkers = await startHookWorkers({
      jobs,
      store,
      registry: hooks,
      log,
      workflows: workflowsForChangeEvent(engineDeps),
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
    const engine = await startWorkflowEngine({
      ...engineDeps,
      ...(config.workflows
        ? {
            concurrency: config.workflows.concurrency,
            timerIntervalMs: config.workflows.timerInterval,
          }
        : {}),
    });
    parts.add("workflow engine", () => engine.stop());
    // Quarterly access reviews start their campaign of each quarter (docs/access-reviews.md).
    const reviewSchedule = startReviewSchedule(engineDeps, config.reviews, log);
    parts.add("review schedule", () => reviewSchedule.stop());
    const retention = startPeriodicRetention(config, pool, log);
    parts.add("retention", () => retention.stop());
    return { stop: () => parts.stopAll() };
  } catch (error) {
    await parts.stopAll().catch(() => {});
    throw error;
  }
}
