import type { AnnalConfig } from "../config/index.ts";
import {
  checkMigrations,
  migrateDatabase,
  MigrationMismatchError,
  type Pool,
} from "../db/index.ts";
import { AnnalError } from "../errors/index.ts";
import { createServer } from "../http/index.ts";
import { HEADLINE, type Logger } from "../logger.ts";
import { EventStore, ensureEventPartitions, ensurePublication } from "../store/index.ts";
import { openDatabase, type OpenDatabase } from "./database.ts";
import { claimInstance } from "./instance-lock.ts";
import { startDirectory } from "./directory.ts";
import { StartedParts } from "./lifecycle.ts";
import { ANNAL_PARTS, type AnnalPart } from "./parts.ts";
import { allProjections, Projector, projectionStatus } from "./projections.ts";
import { startWorkers } from "./workers.ts";
import { mountChannels } from "./channels.ts";
import { startAccounts } from "./accounts.ts";
import type { Services } from "./services.ts";
import { engineDeps } from "./engine.ts";
import { checkConfiguration } from "./preflight.ts";
import { startJobs } from "../jobs/index.ts";
import { deployDefinitions } from "../workflow/index.ts";
import { sendingToCatcher, startDemoMailCatcher } from "../demo/index.ts";
import {
  checkPortFree,
  checkPostgresVersion,
  PortInUseError,
  portOwner,
  registerProcess,
} from "../operations/index.ts";

import { startChainer } from "../audit/index.ts";

export interface StartAnnalOptions {
  readonly config: AnnalConfig;
  /** Run this part alone; default all of them. */
  readonly only?: AnnalPart;
  /**
   * Development (`annal start --dev`): the rules file is watched and reloaded on change.
   * Default: whether NODE_ENV is `development`.
   */
  readonly development?: boolean;
  readonly log: Logger;
}

export interface RunningAnnal {
  /** Where the HTTP server listens (`http://127.0.0.1:4173`); undefined without the API. */
  readonly url: string | undefined;
  /** The event store, for tools and tests that run annal inside their own process. */
  readonly store: EventStore;
  /**
   * Stops accepting requests and finishes those in flight, then stops the workers, the
   * projector and the directory, ends the pool and stops the embedded PostgreSQL. Idempotent.
   */
  stop(): Promise<void>;
}

/**
 * Starts annal: the database (embedded unless a URL is configured), its migrations, the
 * event store, the directory, then the projector, the workers and the HTTP server, each
 * unless `only` leaves it out. Signals are the caller's business (see `shutdownSignal`).
 *
 * @example
 * const annal = await startAnnal({ config: await loadConfig(), log: createLogger("info") });
 * // ... later
 * await annal.stop();
 *
 * @throws MigrationMismatchError `WF_DATABASE_MIGRATION_MISMATCH` when the database records
 *   a migration this program does not know (logged, nothing changed); any error of the
 *   parts. Whatever had started is stopped again before it rejects.
 */
export async function startAnnal(options: StartAnnalOptions): Promise<RunningAnnal> {
  const { log } = options;
  // Reassigned once, where the demo's mail catcher moved from a taken port.
  let { config } = options;
  const parts = options.only === undefined ? [...ANNAL_PARTS] : [options.only];
  const runs = (part: AnnalPart) => parts.includes(part);
  const started = new StartedParts(log);
  try {
    // The configuration's own checks (type names, hooks files, the gateway schema) stop
    // start-up first; `annal verify` runs the same ones.
    const development = options.development ?? process.env.NODE_ENV === "development";
    const {
      hooks,
      gateway,
      workflows: prepared,
      rules,
    } = await checkConfiguration(config, {
      development,
    });
    // A port in use stops start-up before anything starts (the embedded PostgreSQL takes
    // seconds), naming the process that holds it when /proc says.
    if (runs("api")) await checkPortFree(config.server.host, config.server.port);
    // A whole annal owns its data directory (the embedded PostgreSQL, the demo slapd): a
    // second one beside it stops here, before touching any of its files.
    const instance = ownsDataDir(config, options.only)
      ? await claimInstance(config.database.dataDir)
      : undefined;
    if (instance) started.add("instance", () => instance.release());
    const database = await openDatabase(config, log);
    started.add("database", () => database.close());
    // Before migrations: an older server would fail them halfway with a syntax error.
    await checkPostgresVersion(database.pool);
    const store = await prepareEventStore(database.pool, log);
    // The publication of the log for logical-replication clients (docs/publication.md).
    const publication = config.events.publication;
    if (publication !== undefined) {
      const outcome = await ensurePublication(database.pool, publication);
      if (outcome !== "unchanged")
        log.info({ publication, outcome }, `publication ${publication} ${outcome}`);
    }

    // This process in the registry (`annal status`), refreshed until it stops; stopped before
    // the database, so a clean shutdown leaves no row behind.
    const registered = await registerProcess({ pool: database.pool, parts, log });
    started.add("registry", () => registered.stop());

    // Definitions are deployed before anything may start an instance; a changed bundle under
    // a deployed version stops start-up here (WF_DEFINITION_BUNDLE_CHANGED).
    const workflows = await deployDefinitions({ pool: database.pool, store, prepared, log });

    const directory = await startDirectory({
      config,
      pool: database.pool,
      store,
      parts,
      log,
      workflows,
    });
    started.add("directory", () => directory.stop());

    // The demo's mail catcher, where the endpoints that send mail run.
    // Its port taken, it moves to a free one and the transports that sent to the port send
    // to it: the demo's mail never goes to what listens there.
    const mailDemo = config.messaging?.demo;
    if (mailDemo && runs("api")) {
      const catcher = await startDemoMailCatcher({ port: mailDemo.port, pool: database.pool, log });
      started.add("mail catcher", () => catcher.stop());
      if (catcher.moved) {
        const moved = sendingToCatcher(config.messaging!, catcher.moved.from, catcher.port);
        config = { ...config, messaging: moved.messaging };
        const sent = moved.redirected.map((name) => `"${name}"`).join(", ");
        log.info(
          { mail: catcher.url, taken: catcher.moved.from, transports: moved.redirected },
          `demo mail catcher on ${catcher.url}: 127.0.0.1:${catcher.moved.from} is taken (${catcher.moved.reason})${sent ? `, so transport ${sent} sends here instead` : ""}; no mail goes to what listens on ${catcher.moved.from}`,
        );
      } else {
        log.info({ mail: catcher.url }, `demo mail catcher on ${catcher.url}`);
      }
    }

    // The Access Configuration is activated (or not) by every start; sign-in is the API's.
    const accounts = await startAccounts({
      config,
      pool: database.pool,
      store,
      directory,
      serveHttp: runs("api"),
      log,
    });
    started.add("accounts", () => accounts.stop());

    // One pg-boss for the process: webhook ingress queues jobs, the workers run them. Added
    // before the HTTP server and the workers, so it stops after both.
    const jobs =
      runs("api") || runs("workers")
        ? await startJobs({ pool: database.pool, log, supervise: runs("workers") })
        : undefined;
    if (jobs) started.add("jobs", () => jobs.stop());

    const projections = allProjections(config);
    const projector = runs("projector")
      ? await Projector.start({ pool: database.pool, projections, log })
      : undefined;
    if (projector) started.add("projector", () => projector.stop());
    // The log's hash chain follows the log where the projector does (one chainer at a time
    // across processes).
    if (runs("projector")) {
      const chainer = startChainer({ pool: database.pool, log });
      started.add("chainer", () => chainer.stop());
    }

    // The services every part is given. Jobs run where the api or the workers do.
    const services: Services = {
      config,
      pool: database.pool,
      store,
      directory,
      jobs: jobs!,
      hooks,
      workflows,
      engine: engineDeps({
        config,
        pool: database.pool,
        store,
        jobs: jobs!,
        definitions: workflows,
        directory,
        log,
      }),
      accounts,
      gateway,
      log,
    };
    if (runs("workers")) {
      const workers = await startWorkers(services);
      started.add("workers", () => workers.stop());
    }

    let url: string | undefined;
    if (runs("api")) {
      const server = createServer({
        config,
        pool: database.pool,
        projectorStatus: projector
          ? () => projector.status()
          : () => projectionStatus(database.pool, projections),
        log,
        ...(directory.failure === undefined ? {} : { directoryFailure: directory.failure }),
      });
      started.add("http", () => server.close());
      await mountChannels(server, services, rules);
      url = await listen(server, config);
      await instance?.publish(url);
      await registered.publishUrl(url);
    }

    log.info(
      {
        [HEADLINE]: true,
        url,
        parts,
        database: database.description,
        config: config.source.path,
        projections: projections.map((projection) => projection.name),
      },
      startedMessage(url, database, config),
    );
    return {
      url,
      store,
      stop: async () => {
        await started.stopAll();
        log.info("annal stopped");
      },
    };
  } catch (error) {
    await started.stopAll().catch(() => {}); // each failure is logged; the cause is `error`
    throw error;
  }
}

/** Whether this start keeps state in the data directory: a whole annal on the embedded database or the demo directory. */
function ownsDataDir(config: AnnalConfig, only: AnnalPart | undefined): boolean {
  return (
    only === undefined &&
    (config.database.url === undefined || config.directory?.demo !== undefined)
  );
}

/**
 * Applies pending migrations and opens the event store. A database migrated by a program
 * that knows migrations this one does not is left untouched.
 */
export async function prepareEventStore(pool: Pool, log: Logger): Promise<EventStore> {
  try {
    const { pending } = await checkMigrations(pool);
    if (pending > 0) {
      log.info({ pending }, `applying ${pending} migration${pending === 1 ? "" : "s"}`);
      await migrateDatabase(pool);
    }
  } catch (error) {
    if (error instanceof MigrationMismatchError) {
      log.fatal(
        {
          code: error.code,
          recordedKey: error.recordedKey,
          newestKnownKey: error.newestKnownKey,
          hint: error.hint,
        },
        error.message,
      );
    }
    throw error;
  }
  // The event table's partitions, ahead of need (src/store/partitions.ts).
  await ensureEventPartitions(pool);
  return EventStore.open(pool);
}

async function listen(server: ReturnType<typeof createServer>, config: AnnalConfig) {
  const { host, port } = config.server;
  try {
    return await server.listen({ host, port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Taken since the preflight check (or by a process that shares it): named as there.
    if (code === "EADDRINUSE") throw new PortInUseError(host, port, portOwner(port));
    if (code === "EACCES") {
      throw new AnnalError(
        "ANNAL_PORT_DENIED",
        `cannot listen on ${host}:${port}: permission denied`,
        {
          hint: "choose another port with PORT or server.port",
          cause: error,
        },
      );
    }
    throw error;
  }
}

function startedMessage(
  url: string | undefined,
  database: OpenDatabase,
  config: AnnalConfig,
): string {
  const where = url === undefined ? "annal started (no HTTP server)" : `annal serves ${url}`;
  const file = config.source.demo
    ? `the demo configuration (${config.source.path})`
    : config.source.path;
  return `${where}; database: ${database.description}; configuration: ${file}`;
}
