import type { AnnalConfig } from "../config/index.ts";
import type { Logger } from "../logger.ts";
import type { EventStore } from "../store/index.ts";
import { contextBindings } from "./bindings.ts";
import type { RulesModule } from "./load.ts";
import { createMailer } from "./messaging.ts";
import { buildEndpoints } from "./routes.ts";
import { createTemplating } from "./templating.ts";

/**
 * Builds the rules file's routes as `annal start` does, its factory run with the process's
 * bindings, and lets them go: `annal verify`'s check that start will not stop on them.
 * Without GraphQL (`env.query` belongs to a request anyway); a message the factory sends is
 * recorded in `store`, as at start.
 *
 * @returns the routes, as `METHOD /api/path`.
 * @throws AnnalError `ANNAL_RULES_INVALID` when the factory throws (at its line);
 *   `ANNAL_RULES_ROUTE_CONFLICT` naming the route and annal's path.
 */
export async function checkEndpoints(
  module: RulesModule,
  options: {
    readonly config: AnnalConfig;
    readonly store: Pick<EventStore, "appendToStream">;
    readonly log: Logger;
  },
): Promise<readonly string[]> {
  const { config, store, log } = options;
  const templating = createTemplating(config.templating, { development: false });
  const mailer = createMailer({ config: config.messaging, store, templating, log });
  try {
    const env = contextBindings({ config, logger: log, execute: undefined, mailer, templating });
    return (await buildEndpoints(module, env)).routes;
  } finally {
    mailer.close();
  }
}
