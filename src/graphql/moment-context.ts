import { reviewsContext } from "./reviews-context.ts";
import { GraphQLError } from "graphql";
import { checkNotBeforeRetention } from "../audit/index.ts";
import { accessAt, type Caller } from "../auth/index.ts";
import type { DirectoryClient } from "../directory/index.ts";
import { AnnalError } from "../errors/index.ts";
import type { Logger } from "../logger.ts";
import type { Clock } from "../time/index.ts";
import type { GatewayContext } from "./context.ts";
import type { Reads } from "./gateway/entry-reads.ts";
import { entryBudget } from "./entry-budget.ts";
import { acceptedLanguages } from "./gateway/i18n.ts";
import { createEntryLoaders, identityLookups } from "./gateway/loaders.ts";
import { momentDirectory, momentReads } from "./gateway/moment-reads.ts";
import type { ContextRequest, GraphqlPluginOptions } from "./options.ts";
import type { ReadState } from "./gateway/read-state.ts";
import { viewerOf } from "./viewer.ts";

/**
 * The context of an operation asked `@at(moment:)`: every read, whichever source a field
 * names, is the history's at `at` (`momentDirectory`); it writes nothing (`@at` is on
 * queries only). Without capture there is no history to read.
 */
export function momentContext(
  caller: Caller,
  request: ContextRequest,
  options: GraphqlPluginOptions,
  reads: Reads,
  state: ReadState,
  at: Date,
  shared: { readonly clock: () => Clock; readonly spent: { read: number } },
): GatewayContext {
  const { config, projection } = options;
  if (options.directory === undefined || projection === undefined) {
    const refusal = new AnnalError(
      "ANNAL_DIRECTORY_NOT_CONFIGURED",
      "@at reads the directory's history, and annal captures no directory",
      { hint: "configure [directory] with capture to read the directory at a past moment" },
    );
    throw new GraphQLError(refusal.message, { originalError: refusal });
  }
  state.readAt(at);
  const { attributes, binaryAttributes } = reads;
  const directory = entryBudget(
    afterRetentionCheck(
      momentDirectory(options.directory, projection, at),
      once(() => checkNotBeforeRetention(options.pool, at)),
    ),
    config.graphql.limits.maxEntries,
    shared.spent,
  );
  const then = {
    directory,
    loaders: createEntryLoaders({
      directory,
      attributes,
      binaryAttributes,
      identity: identityLookups(config.directory?.identity, projection.schema),
    }),
  };
  return {
    requestId: request.id,
    viewer: viewerOf(caller, config.graphql.actorDN, config.directory?.base),
    clock: shared.clock,
    accessAt: (access) => accessAt(options.pool, access),
    history: options.pool,
    workflows: options.workflows && { engine: options.workflows },
    reviews: reviewsContext(options),
    directory: then.directory,
    loaders: then.loaders,
    readsFrom: () => then,
    moment: momentReads(projection, at),
    attributes,
    binaryAttributes,
    languages: acceptedLanguages(request.headers["accept-language"]),
    log: request.log as unknown as Logger,
    beforeWrite: undefined,
    afterWrite: undefined,
  };
}

/**
 * The history at a moment, read only once `check` passed: a moment before the retention
 * horizon is refused (410 `ANNAL_BEFORE_RETENTION`, the REST channel's code, on each field that
 * reads), as what was true then is no longer in the log and an answer from what is left would
 * be wrong.
 */
function afterRetentionCheck(
  directory: DirectoryClient,
  check: () => Promise<void>,
): DirectoryClient {
  return new Proxy(directory, {
    get(target, property, receiver) {
      if (property === "search") {
        return async function* (...args: Parameters<DirectoryClient["search"]>) {
          await check();
          yield* target.search(...args);
        };
      }
      if (property === "get") {
        return async (...args: Parameters<DirectoryClient["get"]>) => {
          await check();
          return target.get(...args);
        };
      }
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === "function" ? (value as Function).bind(target) : value; // eslint-disable-line @typescript-eslint/no-unsafe-function-type
    },
  });
}

/** `run` once, its promise shared by every caller. */
function once(run: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= run());
}
