import type { AnnalConfig } from "../config/index.ts";
import { calendarsOf } from "../time/index.ts";
import type { Pool } from "../db/index.ts";
import type { Jobs } from "../jobs/index.ts";
import type { Logger } from "../logger.ts";
import type { EventStore } from "../store/index.ts";
import {
  StickyRuns,
  type BindingSources,
  type Definitions,
  type EngineDeps,
  type InstanceRun,
} from "../workflow/index.ts";
import type { RunningDirectory } from "./directory.ts";

/**
 * The workflow engine's dependencies, made once per process and shared by every part that
 * drives it: the engine's workers, hooks providers that start workflows or answer their
 * requests (`context.workflows`), and the GraphQL commands. The parked runs too: a command
 * answering an instance whose run this process's engine keeps checks the answer with that
 * run's schema instead of replaying the code.
 */
export function engineDeps(options: {
  readonly config: AnnalConfig;
  readonly pool: Pool;
  readonly store: EventStore;
  readonly jobs: Jobs;
  readonly definitions: Definitions;
  readonly directory: RunningDirectory;
  readonly log: Logger;
}): EngineDeps {
  const { config, pool, store, jobs, definitions, log } = options;
  return {
    pool,
    store,
    jobs,
    definitions,
    bindings: bindingSources(options),
    log,
    sticky: new StickyRuns<InstanceRun>(config.workflows?.stickyRuns ?? 1000),
    ...(config.workflows ? { stepsPerAdvance: config.workflows.stepsPerAdvance } : {}),
    ...(config.calendars.length > 0 ? { calendars: calendarsOf(config.calendars) } : {}),
  };
}

/** What the engine makes workflows' bindings from: the directory and the REST backends. */
function bindingSources(options: {
  readonly config: AnnalConfig;
  readonly pool: Pool;
  readonly directory: RunningDirectory;
  readonly log: Logger;
}): BindingSources {
  const { config, directory, pool, log } = options;
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
