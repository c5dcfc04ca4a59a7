import { reviewsContext } from "./reviews-context.ts";
import { accessAt, type Caller } from "../auth/index.ts";
import type { Logger } from "../logger.ts";
import { momentOfOperation } from "./at-directive.ts";
import type { GatewayContext } from "./context.ts";
import { entryBudget } from "./entry-budget.ts";
import type { Reads } from "./gateway/entry-reads.ts";
import { acceptedLanguages } from "./gateway/i18n.ts";
import { createEntryLoaders, identityLookups } from "./gateway/loaders.ts";
import { projectionDirectory } from "./gateway/projection-reads.ts";
import { shownValuesDirectory } from "./gateway/shown-reads.ts";
import type { ReadState } from "./gateway/read-state.ts";
import { momentContext } from "./moment-context.ts";
import type { ContextRequest, GraphqlPluginOptions } from "./options.ts";
import type { DocumentOperation } from "./run-document.ts";
import { viewerOf } from "./viewer.ts";

/** The context of one document run as `caller`, for `request`, reading entries with `reads`. */
export function gatewayContext(
  caller: Caller,
  request: ContextRequest,
  options: GraphqlPluginOptions,
  reads: Reads,
  state: ReadState,
  operation: DocumentOperation,
): GatewayContext {
  const { config } = options;
  const clock = () => ({ now: new Date(), timeZone: config.rest.timeZone });
  // A mutation checks the entry it writes, and answers with it, as the directory has it: the
  // projections may not show it yet (a change another writer just made, an import not yet
  // applied). Its wait for its change makes the requests after it read their writes.
  if (operation.definition?.operation === "mutation") state.readDirectory();
  const at = momentOfOperation(
    operation.schema,
    operation.definition,
    operation.variables,
    clock(),
  );
  const { attributes, binaryAttributes } = reads;
  // One budget for both sources: `maxEntries` bounds what the request reads, wherever from.
  const spent = { read: 0 };
  const { maxEntries } = config.graphql.limits;
  if (at !== undefined) {
    return momentContext(caller, request, options, reads, state, at, { clock, spent });
  }
  // AD's SIDs and GUIDs as the projections show them, when read from the directory too.
  const schema = options.schema ?? options.projection?.schema;
  const identity = identityLookups(config.directory?.identity, schema);
  const live =
    options.directory && schema
      ? shownValuesDirectory(options.directory, schema)
      : options.directory;
  const budgeted = live && entryBudget(live, maxEntries, spent);
  const sources = {
    directory: budgeted && {
      directory: budgeted,
      loaders: createEntryLoaders({
        directory: budgeted,
        attributes,
        binaryAttributes,
        identity,
      }),
    },
    projection:
      live && options.projection
        ? (() => {
            const directory = entryBudget(
              projectionDirectory(live, options.projection),
              maxEntries,
              spent,
            );
            return {
              directory,
              loaders: createEntryLoaders({ directory, attributes, binaryAttributes, identity }),
            };
          })()
        : undefined,
  };
  const current = () => sources[state.source] ?? sources.directory;
  const afterWrite = options.afterWrite;
  return {
    requestId: request.id,
    viewer: viewerOf(caller, config.graphql.actorDN, config.directory?.base),
    clock,
    accessAt: (at) => accessAt(options.pool, at),
    history: options.pool,
    workflows: options.workflows && { engine: options.workflows },
    reviews: reviewsContext(options),
    get directory() {
      return current()?.directory;
    },
    get loaders() {
      return current()?.loaders;
    },
    readsFrom: (source) => sources[source],
    // A query reading the projection now may be answered by one statement.
    compiled:
      options.projection && config.graphql.compile && state.source === "projection"
        ? {
            source: options.projection,
            directoryBase: config.directory?.base,
            maxEntries,
            spent,
          }
        : undefined,
    attributes,
    binaryAttributes,
    languages: acceptedLanguages(request.headers["accept-language"]),
    log: request.log as unknown as Logger,
    beforeWrite: options.beforeWrite,
    afterWrite:
      afterWrite &&
      (async (write) => {
        // The other source's loaders have not seen the write either.
        sources.projection?.loaders.forget(write.dn);
        sources.directory?.loaders.forget(write.dn);
        if (write.newDN !== undefined) {
          sources.projection?.loaders.forget(write.newDN);
          sources.directory?.loaders.forget(write.newDN);
        }
        await state.written(() => afterWrite(write, config.graphql.readYourWritesTimeout));
      }),
  };
}
