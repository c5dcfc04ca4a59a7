import type { FastifyInstance } from "fastify";
import { captureOnce } from "../capture/index.ts";
import { endpointsPlugin, type PreparedRules } from "../endpoints/index.ts";
import { graphqlPlugin, recordMutationWrite } from "../graphql/index.ts";
import { hooksPlugin } from "../hooks/index.ts";
import { waitForProjection } from "../projector/index.ts";
import { restPlugin } from "../rest/index.ts";
import { webPlugin } from "../web/index.ts";
import { NameSet } from "../events/index.ts";
import { erasureRoutes } from "./erasure.ts";
import type { Services } from "./services.ts";

/**
 * The ways in, on the HTTP server: the change-event webhook (and failed work), the REST
 * channel, GraphQL, the rules file's custom endpoints, and the web application at `/app` that
 * reads them. Each is a Fastify plugin of its own module; this is where they meet annal's
 * database, directory, jobs and accounts.
 */
export async function mountChannels(
  server: FastifyInstance,
  options: Services,
  rules?: PreparedRules,
): Promise<void> {
  const { config, pool, store, jobs, hooks, directory, log, accounts } = options;
  // One authentication for every channel: the session cookie or a bearer token, per route.
  const { authentication } = accounts;
  await server.register(accounts.signInRoutes);
  await server.register(
    hooksPlugin({
      registry: hooks,
      store,
      jobs,
      authentication,
    }),
  );
  await server.register(erasureRoutes({ config, pool, authentication }));
  // Registered last (below); the REST channel's description lists its routes.
  let endpoints: ReturnType<typeof endpointsPlugin> | undefined;
  await server.register(
    restPlugin({
      pool,
      epoch: store.epoch,
      schema: directory.schema,
      config,
      log,
      authentication,
      customPaths: () => endpoints?.openApiPaths() ?? {},
      // A configured directory is captured (by this process or another): until its first
      // import is in the projections, an entry they lack may be one not imported yet.
      captured: config.directory !== undefined,
    }),
  );
  await server.register(webPlugin({ authentication }));
  const capture = directory.capture;
  const source = config.directory?.capture.source;
  const graphql = graphqlPlugin({
    pool,
    authentication,
    directory: directory.client,
    schema: directory.schema,
    config,
    log,
    workflows: options.engine,
    ...(options.gateway ? { gateway: options.gateway } : {}),
    // Each write a mutation makes is recorded first, so its captured change names it.
    beforeWrite: (write) => recordMutationWrite({ pool, store }, write),
    // Read-your-writes: before a mutation answers, its change is captured and the
    // projections the REST channel and the gateway read show it.
    ...(capture && source
      ? {
          afterWrite: async (_write, timeoutMs) => {
            // Nothing recorded means another pass (or the first-start import) already
            // holds the change: then wait for everything stored so far.
            const deadline = Date.now() + timeoutMs;
            const { position } = await captureOnce(capture, source);
            const target = position ?? (await store.head());
            for (const projection of CHANGE_READERS) {
              await waitForProjection(pool, projection, target, Math.max(1, deadline - Date.now()));
            }
            return target;
          },
        }
      : {}),
    // The gateway's reads from the projections: what capture records.
    ...(capture && directory.schema && config.directory
      ? {
          projection: {
            db: pool,
            base: config.directory.base,
            schema: directory.schema,
            redacted: new NameSet(config.directory.capture.redact),
          },
        }
      : {}),
  });
  await server.register(graphql);
  // Last: annal's own paths under /api are taken, and a rule that would shadow one is refused.
  if (rules) {
    endpoints = endpointsPlugin({
      rules,
      config,
      store,
      authentication,
      execute: graphql.execute,
      log,
    });
    await server.register(endpoints);
  }
}

/** The projections a read after a directory write goes to. */
const CHANGE_READERS = ["entries", "entry_versions", "changes"] as const;
