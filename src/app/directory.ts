import type { AnnalConfig } from "../config/index.ts";
import { AnnalError } from "../errors/index.ts";
import { createNormalizer, type CaptureContext } from "../capture/index.ts";
import { createDirectoryClient, type DirectoryClient } from "../directory/index.ts";
import { loadDirectorySchema, type DirectorySchema } from "../directory/index.ts";
import type { Pool } from "../db/index.ts";
import type { Logger } from "../logger.ts";
import type { EventStore } from "../store/index.ts";
import { randomUUID } from "node:crypto";
import {
  ACCESS_REQUEST,
  DEMO_REVIEW,
  seedDemoHistory,
  startDemoDirectory,
  type EnactReviews,
} from "../demo/index.ts";
import { quarterOf, SCHEDULE_ACTOR, scheduledCampaignId } from "../reviews/index.ts";
import { enactPast, enactPastReviews } from "../simulate/index.ts";
import { calendarsOf } from "../time/index.ts";
import type { Definitions } from "../workflow/index.ts";
import type { Stoppable } from "./lifecycle.ts";
import type { AnnalPart } from "./parts.ts";

export interface DirectoryOptions {
  readonly config: AnnalConfig;
  readonly pool: Pool;
  readonly store: EventStore;
  /** The parts this process runs. */
  readonly parts: readonly AnnalPart[];
  readonly log: Logger;
  /** Start the demo slapd of `[directory.demo]` (the default); `annal import` connects only. */
  readonly startDemo?: boolean;
  /** The deployed workflows: the demo's seeded past runs its access requests with them. */
  readonly workflows?: Definitions;
}

/** The directory as the rest of annal sees it; every member undefined without one. */
export interface RunningDirectory extends Stoppable {
  readonly client: DirectoryClient | undefined;
  readonly schema: DirectorySchema | undefined;
  /** What capture and import need, when the directory was reached. */
  readonly capture: CaptureContext | undefined;
  /** Why there is none, when a directory is configured but could not be used. */
  readonly failure?: unknown;
}

const NO_DIRECTORY: RunningDirectory = {
  client: undefined,
  schema: undefined,
  capture: undefined,
  stop: async () => {},
};

/**
 * What is wrong with the first configured sort pair that names an attribute otherwise than the
 * schema spells a user attribute, or undefined. A search's sort keys take the schema's
 * spelling, so such a pair's index would be built and never read.
 */
export function misnamedSortPair(config: AnnalConfig, schema: DirectorySchema): string | undefined {
  for (const type of config.directory?.types ?? []) {
    for (const pair of type.sortPairs ?? []) {
      for (const name of pair) {
        const where = `[[directory.types]] "${type.name}" sortPairs ${JSON.stringify(pair)}`;
        const canonical = schema.canonical(name);
        if (canonical === undefined) {
          return `${where}: the directory's schema has no attribute ${name}`;
        }
        if (schema.isOperational(canonical)) {
          return `${where}: ${canonical} is an operational attribute; a sort pair's index reads user attributes`;
        }
        if (canonical !== name)
          return `${where}: the directory's schema spells ${name} as ${canonical}`;
      }
    }
  }
  return undefined;
}

/**
 * The LDAP directory's place in start-up, after the database and before the parts that use
 * it: the demo slapd (`[directory.demo]`), a pool of bound connections, and the directory's
 * schema. A directory that cannot be reached does not stop annal: everything that does not
 * need it is still served, and the log says once what is missing and how to mend it.
 */
export async function startDirectory(options: DirectoryOptions): Promise<RunningDirectory> {
  const { config, log } = options;
  const directory = config.directory;
  if (directory === undefined) return NO_DIRECTORY;
  let stopDemo = async () => {};
  if (directory.demo !== undefined && options.startDemo !== false) {
    const demo = await startDemoDirectory({
      dataDir: directory.demo.dataDir,
      port: directory.demo.port,
      password: directory.password,
    });
    if ("unavailable" in demo) {
      log.warn({ code: "ANNAL_SLAPD_NOT_INSTALLED" }, `no demo directory: ${demo.unavailable}`);
      return NO_DIRECTORY;
    }
    stopDemo = () => demo.stop();
    log.info({ directory: demo.url }, `demo directory (slapd) on ${demo.url}`);
  }
  let client: DirectoryClient | undefined;
  const stop = async () => {
    await client?.close();
    await stopDemo();
  };
  let schema: DirectorySchema;
  try {
    client = createDirectoryClient({
      url: directory.url,
      bindDN: directory.bindDN,
      password: directory.password,
      poolSize: directory.poolSize,
      timeoutMs: directory.timeout,
      ...(directory.tls ? { tls: directory.tls } : {}),
    });
    schema = await loadDirectorySchema(client);
  } catch (error) {
    const code = (error as { code?: string }).code;
    log.error(
      { err: error, code, directory: directory.url },
      code === "ANNAL_LDAP_TLS_FAILED"
        ? "TLS with the directory failed; annal runs without it (restart annal once it is mended)"
        : "the directory could not be reached; annal runs without it (restart annal once it is up)",
    );
    await stop();
    return { ...NO_DIRECTORY, failure: error };
  }
  const misnamed = misnamedSortPair(config, schema);
  if (misnamed) {
    await stop();
    throw new AnnalError("ANNAL_SORT_PAIR_MISNAMED", misnamed, {
      hint: "name each attribute of the pair as the directory's schema spells it",
    });
  }
  return {
    client,
    schema,
    capture: {
      pool: options.pool,
      store: options.store,
      directory: client,
      normalizer: createNormalizer(schema, directory),
      base: directory.base,
      log: log.child({ component: "capture" }),
      valuesPerWrite: directory.capture.valuesPerWrite,
      ...(directory.demo?.history ? { beforeFirstImport: demoHistory(options) } : {}),
    },
    stop,
  };
}

/**
 * The demo's past, written on its first start: the directory's story and, where the demo's
 * access request is deployed, past requests run by the engine (`enactPast`, a scratch database
 * on a moved clock) over that story.
 */
function demoHistory(options: DirectoryOptions): CaptureContext["beforeFirstImport"] {
  const { config, pool, workflows } = options;
  const calendars = config.calendars.length > 0 ? calendarsOf(config.calendars) : undefined;
  return (context) => {
    const now = new Date();
    if (!workflows?.current(ACCESS_REQUEST)) return seedDemoHistory(context, now);
    const review = config.reviews.find((r) => r.name === DEMO_REVIEW);
    const enactReviews: EnactReviews | undefined =
      review &&
      (async (plans, history) => {
        const began = performance.now();
        const enacted = await enactPastReviews({
          live: pool,
          definitions: workflows,
          plans: plans.map((plan) => ({
            at: plan.at,
            definition: review,
            ...(plan.startedBy === "schedule"
              ? {
                  campaignId: scheduledCampaignId(review.name, quarterOf(plan.at)),
                  startedBy: SCHEDULE_ACTOR,
                }
              : { campaignId: randomUUID(), startedBy: plan.startedBy }),
            decide: plan.decide,
          })),
          history,
          base: context.base,
          ...(calendars ? { calendars } : {}),
          until: now,
          log: context.log,
        });
        const ms = Math.round(performance.now() - began);
        context.log.info({ campaigns: enacted.campaigns, ms }, "past access reviews enacted");
        return enacted;
      });
    return seedDemoHistory(
      context,
      now,
      async (plans, directoryAt) => {
        const began = performance.now();
        const enacted = await enactPast({
          live: pool,
          definitions: workflows,
          plans,
          directoryAt,
          base: context.base,
          ...(calendars ? { calendars } : {}),
          until: now,
          log: context.log,
        });
        const ms = Math.round(performance.now() - began);
        context.log.info(
          { requests: enacted.instances.length, ms },
          "past access requests enacted",
        );
        return enacted;
      },
      enactReviews,
    );
  };
}
