import { causedWrites, startCaptureWorker } from "../capture/index.ts";
import { startHookWorkers } from "../hooks/index.ts";
import {
  startWorkflowEngine,
  workflowsForChangeEvent,
  type BindingSources,
  type EngineDeps,
} from "../workflow/index.ts";
import type { Services } from "./services.ts";
import { StartedParts, type Stoppable } from "./lifecycle.ts";

/**
 * The background workers (`--only workers`), pg-boss job handlers: directory capture (a
 * scheduled job that runs in one process at a time across every annal process) and the
 * processing of accepted change events, and the workflow engine. Stopped after the HTTP
 * server has closed and before the jobs and the pool.
 */
export async function startWorkers(options: Services): Promise<Stoppable> {
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
    // The engine's dependencies, shared by the engine and by hooks providers that start
    // workflows or answer their requests (`context.workflows`).
    const engineDeps: EngineDeps = {
      pool,
      store,
      jobs,
      definitions: options.workflows,
      bindings: bindingSources(options),
      log,
      ...(config.workflows ? { stepsPerAdvance: config.workflows.stepsPerAdvance } : {}),
    };
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
    return { stop: () => parts.stopAll() };
  } catch (error) {
    await parts.stopAll().catch(() => {});
    throw error;
  }
}

/** What the engine makes workflows' bindings from: the directory and the REST backends. */
function bindingSources(services: Services): BindingSources {
  const { config, directory, pool, log } = services;
  return {
    pool,
    log,
    ...(directory.client && config.directory
      ? {
          directory: {
            client: directory.client,
            base: config.directory.base,
            boundAs: config.directory.bindDN,
          },
        }
      : {}),
    rest: config.graphql.rest.map((backend) => ({
      name: backend.name,
      base: backend.base,
      headers: backend.headers,
    })),
  };
}
