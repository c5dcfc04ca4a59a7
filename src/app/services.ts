import type { AnnalConfig } from "../config/index.ts";
import type { Pool } from "../db/index.ts";
import type { Gateway } from "../graphql/index.ts";
import type { HooksRegistry } from "../hooks/index.ts";
import type { Jobs } from "../jobs/index.ts";
import type { Logger } from "../logger.ts";
import type { EventStore } from "../store/index.ts";
import type { Definitions, EngineDeps } from "../workflow/index.ts";
import type { RunningAccounts } from "./accounts.ts";
import type { RunningDirectory } from "./directory.ts";

/**
 * What `startAnnal` opens once and hands to every part a process runs (the channels on the
 * HTTP server, the workers): one type, so a part takes what it needs from the same services.
 */
export interface Services {
  readonly config: AnnalConfig;
  readonly pool: Pool;
  readonly store: EventStore;
  readonly directory: RunningDirectory;
  readonly jobs: Jobs;
  readonly hooks: HooksRegistry;
  /** The workflow definitions deployed at start, and every stored version by need. */
  readonly workflows: Definitions;
  /** The engine's dependencies: its workers, hooks providers and GraphQL's commands share them. */
  readonly engine: EngineDeps;
  /** The one authentication, and sign-in's routes. */
  readonly accounts: RunningAccounts;
  /** The gateway built when the configuration was checked; built when needed if left out. */
  readonly gateway?: Gateway;
  readonly log: Logger;
}
